"""Optional distributions: import them, or say which one to install."""
import importlib

_INSTALL_HINT = "pip install {dist}  (or pip install 'retrograd[all]')"


def require(module: str, dist: str):
    try:
        return importlib.import_module(f"retrograd.{module}")
    except ImportError as exc:
        if getattr(exc, "name", None) not in (f"retrograd.{module}", None) and \
                not str(exc).startswith("No module named 'retrograd."):
            raise
        raise ImportError(
            f"retrograd.{module} is provided by the '{dist}' distribution, which is not installed: "
            + _INSTALL_HINT.format(dist=dist)) from exc
