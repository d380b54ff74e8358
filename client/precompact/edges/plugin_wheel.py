"""precompact's own wheel, made from the plugin's folder with the standard library alone, so
that the plugin's first use installs wheels only: no build backend fetched from the package
index, nothing built from source. It holds what hatchling's wheel holds (`client/precompact`
as `precompact`, the name, version, requirements and console script of pyproject.toml), and
pip installs it like any other wheel (`--no-index --no-deps`)."""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

from precompact import __version__

TAG = "py3-none-any"
# Every entry carries this date, so that the same source makes the same wheel.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def build(plugin_root: Path, destination: Path) -> Path:
    """Writes precompact's wheel into `destination` and returns its path."""
    project = tomllib.loads((plugin_root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name = project["name"]
    dist_info = f"{name}-{__version__}.dist-info"
    files: dict[str, bytes] = {}
    package = plugin_root / "client" / "precompact"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[f"precompact/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {__version__}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        "License-File: LICENSE",
        *(f"Requires-Dist: {requirement}" for requirement in project["dependencies"]),
    ]
    files[f"{dist_info}/licenses/LICENSE"] = (plugin_root / "LICENSE").read_bytes()
    scripts = [f"{script} = {target}" for script, target in project["scripts"].items()]
    files[f"{dist_info}/METADATA"] = "\n".join(metadata).encode() + b"\n"
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: precompact plugin\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()
    )
    files[f"{dist_info}/entry_points.txt"] = "\n".join(["[console_scripts]", *scripts]).encode() + b"\n"
    record = [f"{member},sha256={_digest(content)},{len(content)}" for member, content in files.items()]
    files[f"{dist_info}/RECORD"] = "\n".join([*record, f"{dist_info}/RECORD,,"]).encode() + b"\n"
    wheel = destination / f"{name}-{__version__}-{TAG}.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, content in files.items():
            archive.writestr(zipfile.ZipInfo(member, ZIP_DATE), content, compress_type=zipfile.ZIP_DEFLATED)
    return wheel


def _digest(content: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
