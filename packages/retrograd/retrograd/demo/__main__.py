"""``python -m retrograd.demo``: see ``python -m retrograd.demo --help``."""
import sys

from retrograd.demo._cli import blas_threads_note, limit_blas_threads, main

if __name__ == "__main__":
    if not {"-h", "--help"} & set(sys.argv[1:]):
        print(blas_threads_note(limit_blas_threads()), flush=True)
    sys.exit(main())
