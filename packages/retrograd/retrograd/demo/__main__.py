"""``python -m retrograd.demo``: see ``python -m retrograd.demo --help``."""
import sys

from retrograd.demo._cli import limit_blas_threads, main

if __name__ == "__main__":
    limit_blas_threads()
    sys.exit(main())
