"""Installed, attnsvm adds one name to site-packages and runs every part of every result from any
directory: the repository's lemmas/, checks/ and counterexamples/ live under `attnsvm.results`,
so a `checks` package in the working directory changes nothing, and a declared part that cannot
be loaded is an error row, never skipped."""

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

from attnsvm.claims import Verdict, registry, runner

ROOT = Path(__file__).resolve().parents[1]


def test_a_checks_package_in_the_working_directory_changes_no_part(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "__init__.py").write_text("")
    (tmp_path / "lemmas").mkdir()
    (tmp_path / "lemmas" / "__init__.py").write_text("raise ImportError('not attnsvm')\n")
    out = subprocess.run([sys.executable, "-m", "attnsvm", "check", "lemma10", "--json", "r.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    parts = [r["part"] for r in json.loads((tmp_path / "r.json").read_text())["reports"]]
    assert parts == ["derivation", "check", "drop:general_position"]


def test_a_declared_part_that_cannot_load_is_an_error_row(monkeypatch):
    e = registry.entry("lemma10")
    real = registry._part

    def broken(package, entry):
        if package == "checks":
            raise ImportError("No module named 'attnsvm.results.checks.lemma10'")
        return real(package, entry)

    monkeypatch.setattr(registry, "_part", broken)
    parts = [t.part for t in runner.result_tasks(e, "quick", 0)]
    assert "check" in parts
    rep = runner.run(runner.Task(e.id, "check", "quick", 0))
    assert rep.verdict is Verdict.INCONCLUSIVE and rep.error and not rep.as_expected
    assert "ImportError" in rep.error["type"]


def test_the_wheel_installs_one_name_and_runs_every_part_elsewhere(tmp_path):
    source, wheel_dir = tmp_path / "source", tmp_path / "wheel"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in files:                      # build from a copy: the checkout is left as it was
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir),
                    str(source)], check=True, capture_output=True, timeout=600, cwd=tmp_path)
    wheel = next(wheel_dir.glob("attnsvm-*.whl"))
    top = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in top if not t.endswith(".dist-info")} == {"attnsvm"}
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=False)     # the dependencies from this interpreter
    py = env_dir / "bin" / "python"
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with zipfile.ZipFile(wheel) as z:       # the wheel's files, ahead of the editable checkout on sys.path
        z.extractall(site)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([py, "-c", "import attnsvm.results.checks.lemma10 as m, attnsvm.claims.registry as r; "
                            "print(m.__file__, r.WITNESS_DIR, len(list(r.WITNESS_DIR.glob('*.json'))))"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    module, witnesses, count = where.stdout.split()
    assert module.startswith(site) and witnesses.startswith(site), where.stdout + where.stderr
    assert int(count) == len(list(registry.WITNESS_DIR.glob("*.json")))
    out = subprocess.run([py, "-m", "attnsvm", "check", "lemma10", "--json", "r.json"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    parts = [r["part"] for r in json.loads((work / "r.json").read_text())["reports"]]
    assert parts == ["derivation", "check", "drop:general_position"]


def test_every_package_of_the_source_tree_is_listed_for_the_wheel():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "attnsvm").rglob("__init__.py")}
    mapped = {f"attnsvm.results.{part}" for part in ("lemmas", "checks", "counterexamples")}
    assert listed == found | mapped
