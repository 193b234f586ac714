"""The retrograd demo: ``python -m retrograd.demo`` trains a small CNN on
digits it renders itself (nothing is downloaded)."""
