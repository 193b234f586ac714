"""Check the sdists that `nox -s sdists` built: each holds only its own
distribution's files (those git tracks under its folder, plus PKG-INFO), and
a wheel was built from it.

    python tests/install/check_sdists.py OUT_DIR FOLDER...   (OUT_DIR/<key>/ per folder, in order)
"""
import pathlib
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def check(out: pathlib.Path, folder: str) -> list:
    problems = []
    sdists = sorted(out.glob("*.tar.gz"))
    wheels = sorted(out.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        return [f"{folder}: expected one sdist and one wheel in {out}, found {sdists + wheels}"]
    tracked = set(subprocess.run(["git", "ls-files", "--", folder], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.split())
    with tarfile.open(sdists[0]) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = member.name.split("/", 1)[1]
            if rel == "PKG-INFO":
                continue
            if f"{folder}/{rel}" not in tracked:
                problems.append(f"{sdists[0].name}: {rel} is not a file of {folder}/")
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    missing = {t[len(folder) + 1:] for t in tracked} - names
    if missing:
        problems.append(f"{sdists[0].name} lacks {sorted(missing)}")
    print(f"{folder}: {sdists[0].name} ({len(names)} files, only its own), {wheels[0].name}")
    return problems


def main(argv):
    out, folders = pathlib.Path(argv[0]), argv[1:]
    keys = sorted(p.name for p in out.iterdir())
    problems = []
    for folder in folders:
        key = next(k for k in keys if (out / k).is_dir() and folder.rstrip("/").endswith(k))
        problems += check(out / key, folder.rstrip("/"))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
