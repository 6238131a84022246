"""What the data scripts share that is not data: loading a sibling script (its name has hyphens)
as a module, and the stamp by which a generated folder in build/ is rebuilt only when the scripts
that write it change (the bench models: make-gpt2-bench-model.py, make-llama-bench-model.py).
"""
import hashlib
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "..", "build")


def load_script(name):
    """scripts/data/<name>.py as a module, without running its main()."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"),
                                                  os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Stamp:
    """build/<folder>/stamp: the sha256 of `sources` (files of scripts/data/, or paths); the
    folder's `files` are up to date when they all exist and the stamp matches."""

    def __init__(self, folder, files, sources):
        self.folder, self.out = folder, os.path.join(BUILD, folder)
        self.files, self.path = files, os.path.join(self.out, "stamp")
        h = hashlib.sha256()
        for source in sources:
            with open(os.path.join(HERE, source), "rb") as f:
                h.update(f.read())
        self.want = h.hexdigest()

    def up_to_date(self):
        """True (and says so) when nothing needs writing and there is no --force; else the old
        stamp is removed, so an interrupted run leaves none."""
        os.makedirs(self.out, exist_ok=True)
        have = open(self.path).read().strip() if os.path.exists(self.path) else ""
        if ("--force" not in sys.argv and have == self.want
                and all(os.path.exists(os.path.join(self.out, f)) for f in self.files)):
            print("build/%s/ is up to date" % self.folder)
            return True
        if os.path.exists(self.path):
            os.remove(self.path)
        return False

    def write(self):
        with open(self.path, "w") as f:
            f.write(self.want + "\n")
