"""Executes every notebook in python/notebooks with nbclient (the python3 kernel of /usr/bin/python3) and saves the
executed copy and its figures (PNG) in OUT_DIR. Exits 1, naming the notebook and the cell, when a cell fails.

usage: /usr/bin/python3 python/run_notebooks.py OUT_DIR   (PYTHONPATH must reach build/release/python)"""

import glob
import os
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    os.environ["SLUICE_NOTEBOOK_OUT"] = out_dir
    os.environ["SLUICE_ROOT"] = ROOT
    failed = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "python", "notebooks", "*.ipynb"))):
        name = os.path.basename(path)
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": out_dir}})
        try:
            client.execute()
            print(f"ok: {name}")
        except CellExecutionError as error:
            failed += 1
            print(f"FAIL: {name}: {error}")
        nbformat.write(notebook, os.path.join(out_dir, name))
    figures = sorted(glob.glob(os.path.join(out_dir, "*.png")))
    print(f"{len(figures)} figures in {out_dir}: " + ", ".join(os.path.basename(f) for f in figures))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
