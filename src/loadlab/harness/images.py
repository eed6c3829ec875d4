"""Build the base image and the server and loadgen images.

The base image `loadlab/base:trixie` comes from `debian:trixie-slim` where a
registry answers and from `debootstrap` + `docker import` where none does.

Builds use the classic builder through the Docker SDK (no BuildKit, which
Debian's engine may lack). The build context is the server folder plus one
extra file, `ca-bundle.crt`: a CA bundle for TLS-intercepting networks (empty
when none is wanted). Dockerfiles append it to the trust store of their build
stages only; final stages start from the base image again, so it never lands
in an image that runs (tests/test_images.py checks).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import docker
import docker.errors

from loadlab import paths
from loadlab.errors import BuildError, BuildInputUnavailable, LoadlabError, ParameterError
from loadlab.harness.apt import apt_install
from loadlab.servers import LOADGEN, ServerSpec, loadgen_image

BASE_IMAGE = "loadlab/base:trixie"
BASE_REGISTRY_IMAGE = "debian:trixie-slim"
DEBIAN_MIRROR = os.environ.get("LOADLAB_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CA_BUNDLE_ENV = "LOADLAB_CA_BUNDLE"
DEFAULT_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
BUILD_CONTEXT_CA_NAME = "ca-bundle.crt"
BUILD_INPUTS_DIR = "build-inputs"
# The files a build never needs; keeping them out keeps the context small.
_CONTEXT_EXCLUDES = {"target", "__pycache__", ".venv", "node_modules", ".git"}
# A Dockerfile that cannot get an optional input says so on a line starting with this.
INPUT_UNAVAILABLE_MARKER = "loadlab: build input unavailable:"
# Where builds known to lack an input are remembered (by build hash), so that
# one missing input costs one failed build per machine, not one per notebook.
UNAVAILABLE_BUILDS_FILE = Path(os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "loadlab" / "unavailable-builds.json"
# The label that carries an image's build-input hash (see build_inputs_hash).
BUILD_HASH_LABEL = "loadlab.build_hash"


def ca_bundle_path(explicit: str | None = None) -> Path | None:
    """The CA bundle to trust in build stages.

    `explicit` (or $LOADLAB_CA_BUNDLE) wins; "none" means no bundle. Without
    either, the host's own bundle is used, because a network that intercepts
    TLS for the host does so for the build containers too.
    """
    choice = explicit if explicit is not None else os.environ.get(CA_BUNDLE_ENV)
    if choice is not None:
        if choice.lower() == "none" or choice == "":
            return None
        path = Path(choice)
        if not path.is_file():
            raise ParameterError("ca_bundle", choice, "a readable PEM file, or 'none'")
        return path
    for candidate in DEFAULT_CA_BUNDLES:
        if Path(candidate).is_file():
            return Path(candidate)
    return None


def resolve_build_inputs(spec: ServerSpec | None) -> dict[str, Path]:
    """Build argument -> local file, for the inputs whose environment variable is set."""
    resolved: dict[str, Path] = {}
    for argument, variable in (spec.build_inputs if spec else {}).items():
        value = os.environ.get(variable)
        if not value:
            continue
        path = Path(value)
        if not path.is_file():
            raise ParameterError(variable, value, "a readable file (or unset)")
        resolved[argument] = path
    return resolved


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _context_files(directory: Path) -> list[tuple[str, Path]]:
    """(path in the context, file) for every file of a server folder that a build sees, sorted."""
    files = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if any(part in _CONTEXT_EXCLUDES for part in relative.parts) or not path.is_file():
            continue
        files.append((str(relative), path))
    return files


def build_inputs_hash(directory: Path, build_args: dict[str, str], ca_bundle: Path | None,
                      inputs: dict[str, Path] | None, base_image_id: str | None) -> str:
    """SHA-256 (hex) of everything a build reads: the folder's files, build args, CA bundle, inputs, base image.

    Two builds with the same hash make the same program, so an image whose
    label carries the current hash is reused and any other is rebuilt: an edit
    to a server's source, Dockerfile or lockfile rebuilds that server alone.
    """
    digest = hashlib.sha256()

    def add(name: str, data: bytes) -> None:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())

    for relative, path in _context_files(directory):
        add("file:" + relative, path.read_bytes())
    add("args", json.dumps(build_args, sort_keys=True).encode())
    add("ca-bundle", ca_bundle.read_bytes() if ca_bundle else b"")
    for argument, path in sorted((inputs or {}).items()):
        add(f"input:{argument}:{path.name}", path.read_bytes())
    add("base", (base_image_id or "").encode())
    return digest.hexdigest()


def image_build_hash(client: docker.DockerClient, tag: str) -> str | None:
    """The build-input hash an image was built from (None for images built before hashes, or missing ones)."""
    try:
        return (client.images.get(tag).labels or {}).get(BUILD_HASH_LABEL)
    except docker.errors.ImageNotFound:
        return None


def _build_context(directory: Path, ca_bundle: Path | None, inputs: dict[str, Path] | None = None) -> io.BytesIO:
    """The server folder, plus ca-bundle.crt and build-inputs/ (always present, maybe empty)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for relative, path in _context_files(directory):
            tar.add(path, arcname=relative, recursive=False)
        _add_bytes(tar, BUILD_CONTEXT_CA_NAME, ca_bundle.read_bytes() if ca_bundle else b"")
        _add_bytes(tar, f"{BUILD_INPUTS_DIR}/.keep", b"")
        for path in (inputs or {}).values():
            tar.add(path, arcname=f"{BUILD_INPUTS_DIR}/{path.name}", recursive=False)
    buffer.seek(0)
    return buffer


def build_image(
    client: docker.DockerClient,
    directory: Path,
    tag: str,
    build_args: dict[str, str] | None = None,
    ca_bundle: Path | None = None,
    log=print,
    log_path: Path | None = None,
    inputs: dict[str, Path] | None = None,
    labels: dict[str, str] | None = None,
) -> str:
    """Build `directory`'s Dockerfile as `tag`, streaming the log; returns the image id.

    Raises BuildError with the last lines of the log on failure.
    """
    context = _build_context(directory, ca_bundle, inputs)
    # Each input's build argument names its path in the context; unset ones are "".
    args = {"BASE_IMAGE": BASE_IMAGE, **(build_args or {})}
    args.update({argument: f"{BUILD_INPUTS_DIR}/{path.name}" for argument, path in (inputs or {}).items()})
    lines: list[str] = []
    log_file = open(log_path, "w") if log_path else None
    image_id = None
    try:
        stream = client.api.build(
            fileobj=context, custom_context=True, tag=tag, buildargs=args, rm=True,
            forcerm=True, decode=True, labels={"loadlab.source": directory.name, **(labels or {})},
        )
        for chunk in stream:
            if "error" in chunk:
                lines.append(chunk["error"].rstrip())
                raise BuildError(f"building {tag} from {directory} failed:\n" + "\n".join(lines[-40:]))
            text = chunk.get("stream", "")
            if "aux" in chunk and "ID" in chunk["aux"]:
                image_id = chunk["aux"]["ID"]
            for line in text.splitlines():
                lines.append(line)
                if log_file:
                    log_file.write(line + "\n")
                if line.startswith("Step ") or line.startswith("Successfully"):
                    log(f"  [{tag}] {line}")
    except docker.errors.APIError as error:
        raise BuildError(f"building {tag} from {directory} failed: {error}\n" + "\n".join(lines[-40:])) from error
    finally:
        if log_file:
            log_file.close()
    return image_id or client.images.get(tag).id


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def _pull_base(client: docker.DockerClient, log) -> bool:
    try:
        log(f"pulling {BASE_REGISTRY_IMAGE}")
        image = client.images.pull(BASE_REGISTRY_IMAGE)
    except Exception as error:  # no registry: the expected case on closed networks
        log(f"  pull failed ({str(error).splitlines()[0][:120]}); building from Debian's archive instead")
        return False
    image.tag(*BASE_IMAGE.split(":"))
    return True


def _debootstrap_base(client: docker.DockerClient, log) -> None:
    if os.geteuid() != 0:
        raise BuildError(
            f"{BASE_IMAGE} is missing, no registry answers, and building it with debootstrap needs root: "
            "run `make images` as root once, or load an image with `docker load`."
        )
    if shutil.which("debootstrap") is None:
        apt_install("debootstrap", log=log)
    with tempfile.TemporaryDirectory(prefix="loadlab-rootfs-") as temporary:
        rootfs = Path(temporary) / "trixie"
        log(f"debootstrap trixie from {DEBIAN_MIRROR} (about a minute)")
        result = subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=ca-certificates", "trixie", str(rootfs), DEBIAN_MIRROR],
            capture_output=True, text=True,
        )
        if result.returncode != 0:
            raise BuildError("debootstrap failed:\n" + (result.stdout + result.stderr)[-3000:])
        # A slimmer image: no apt lists or caches (each Dockerfile runs apt-get update).
        for leftover in ("var/lib/apt/lists", "var/cache/apt/archives"):
            for path in (rootfs / leftover).glob("*"):
                if path.is_file():
                    path.unlink()
        log(f"docker import -> {BASE_IMAGE}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        importer = subprocess.run(
            ["docker", "import", "--change", 'CMD ["bash"]', "-", BASE_IMAGE],
            stdin=tar.stdout, capture_output=True, text=True,
        )
        tar.wait()
        if importer.returncode != 0:
            # Without the docker CLI, import through the SDK (slower: the tar is buffered).
            data = subprocess.run(["tar", "-C", str(rootfs), "-c", "."], capture_output=True, check=True).stdout
            client.images.import_image(data, repository=BASE_IMAGE.split(":")[0], tag=BASE_IMAGE.split(":")[1])


def ensure_base_image(client: docker.DockerClient, log=print) -> None:
    if image_exists(client, BASE_IMAGE):
        return
    if not _pull_base(client, log):
        _debootstrap_base(client, log)


def ensure_image(
    client: docker.DockerClient,
    spec: ServerSpec | None,
    variant: str | None = None,
    rebuild: bool = False,
    ca_bundle: Path | None = None,
    log=print,
) -> str:
    """Build a server image (or the loadgen image when `spec` is None) unless it is current.

    Current means the image's `loadlab.build_hash` label equals the hash of
    today's build inputs (build_inputs_hash); a missing image, an image built
    from other inputs, or `rebuild=True` builds it.
    """
    ensure_base_image(client, log)
    if spec is None:
        tag, directory, args = loadgen_image(), paths.SERVERS_DIR / LOADGEN, {}
    else:
        variant = spec.check_variant(variant)
        tag, directory, args = spec.image(variant), spec.directory, spec.variants[variant]
    inputs = resolve_build_inputs(spec)
    if spec is not None:
        args = {**{argument: "" for argument in spec.build_inputs}, **args}
    ca_bundle = ca_bundle if ca_bundle is not None else ca_bundle_path()
    wanted = build_inputs_hash(directory, args, ca_bundle, inputs, client.images.get(BASE_IMAGE).id)
    built = image_build_hash(client, tag)
    if not rebuild and built == wanted:
        return tag
    known_unavailable = _unavailable_builds().get(tag, {})
    if not rebuild and known_unavailable.get("build_hash") == wanted:
        raise BuildInputUnavailable(tag, known_unavailable["reason"])
    why = "missing" if not image_exists(client, tag) else ("--rebuild" if rebuild and built == wanted else "its build inputs changed")
    log(f"building {tag} ({why})")
    try:
        build_image(client, directory, tag, args, ca_bundle, log, inputs=inputs, labels={BUILD_HASH_LABEL: wanted})
    except BuildError as error:
        reason = build_failure_reason(error)
        if spec is not None and spec.build_inputs and not inputs and reason.startswith(INPUT_UNAVAILABLE_MARKER):
            reason = reason[len(INPUT_UNAVAILABLE_MARKER):].strip()
            _remember_unavailable(tag, wanted, reason)
            raise BuildInputUnavailable(tag, reason) from error
        raise
    return tag


# Images built at once by `loadlab build --all`. One build left a core of this 2-core machine idle for a third to a
# half of a cold build (apt's downloads and dpkg's single-threaded unpacking between the compilers' parallel steps;
# vmstat every 5 s, 2026-12-06), so two lanes overlap one build's waits with another's work. Not more: the compile
# steps already use both cores (cargo, go, make -j2). Builds happen before any measurement, never beside one.
BUILD_LANES = 2
# Builds that took minutes cold (the rest took seconds): started first.
SLOW_BUILDS = ("php-swoole", "loadgen", "rust-tokio")


def build_in_lanes(client_factory, jobs: list[tuple[str, list[tuple[str, Callable]]]], keep_going: bool = True,
                   lanes: int = BUILD_LANES, log=print) -> tuple[list[str], list[BuildInputUnavailable]]:
    """Build `jobs` (what, [(image, build: client -> tag)]) in `lanes` at once; returns (failures as "image: error",
    images skipped for an input that cannot be had). Each job talks to the engine through a client of its own from
    `client_factory()`: the SDK's client is not safe to share between threads (docker-py #3229).

    A job's images are built one after another in its lane: a server's variants share their first layers, which
    the second finds in the cache the first filled. The base image must exist already (ensure_base_image): two
    lanes must not both make it. Without `keep_going` the first failure stops every lane from starting another job
    (one already building finishes) and is raised.
    """
    failures: list[str] = []
    skipped: list[BuildInputUnavailable] = []
    raised: list[LoadlabError] = []
    stop = threading.Event()
    lock = threading.Lock()

    def build_job(job: list[tuple[str, Callable]]) -> None:
        with contextlib.closing(client_factory()) as client:
            for image, build in job:
                if stop.is_set():
                    return
                try:
                    log(f"{build(client)}: ready")
                except BuildInputUnavailable as unavailable:
                    with lock:
                        skipped.append(unavailable)
                except LoadlabError as error:
                    with lock:
                        if not keep_going:
                            stop.set()
                            raised.append(error)
                        failures.append(f"{image}: {error}")

    with ThreadPoolExecutor(max_workers=max(1, lanes), thread_name_prefix="build-lane") as pool:
        for future in [pool.submit(build_job, job) for _, job in jobs]:
            future.result()
    if raised:
        raise raised[0]
    return failures, skipped


def _unavailable_builds() -> dict:
    try:
        return json.loads(UNAVAILABLE_BUILDS_FILE.read_text())
    except (OSError, ValueError):
        return {}


_UNAVAILABLE_LOCK = threading.Lock()  # two build lanes may both remember one


def _remember_unavailable(tag: str, build_hash: str, reason: str) -> None:
    with _UNAVAILABLE_LOCK:
        _remember_unavailable_locked(tag, build_hash, reason)


def _remember_unavailable_locked(tag: str, build_hash: str, reason: str) -> None:
    known = _unavailable_builds()
    known[tag] = {"build_hash": build_hash, "reason": reason}
    try:
        UNAVAILABLE_BUILDS_FILE.parent.mkdir(parents=True, exist_ok=True)
        UNAVAILABLE_BUILDS_FILE.write_text(json.dumps(known, indent=1))
    except OSError:
        pass  # only a cache: without it the next call tries the build again


_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def build_failure_reason(error: BuildError) -> str:
    """The last line a Dockerfile printed to explain itself (`loadlab: ...`), else the log's last line."""
    lines = [_ANSI_ESCAPE.sub("", line).strip() for line in str(error).splitlines()]
    lines = [line for line in lines if line]
    # The last such line: earlier ones narrate progress ("loadlab: pecl install ..."), the last says why it stopped.
    said = [line for line in lines if line.startswith("loadlab:")]
    return said[-1] if said else (lines[-1] if lines else str(error))


def image_digest(client: docker.DockerClient, tag: str) -> str:
    """The image id (content digest of its config), for provenance."""
    return client.images.get(tag).id


def remove_all_images(client: docker.DockerClient) -> list[str]:
    """Remove every loadlab image (servers, loadgen, test builds, the base) and forget unavailable builds.

    Returns what was removed. The build stages and layers the classic builder
    keeps (untagged images descending from the base image) go too, children
    before parents, so the next build is as cold as on a new machine. An image
    of someone else's built on our base keeps the base, and the error says so.
    """
    listing = {image["Id"]: image for image in client.api.images(all=True)}
    base_ids = [i for i, image in listing.items() if BASE_IMAGE in (image.get("RepoTags") or [])]

    def ours(tags) -> bool:
        return any(tag.split("/", 1)[0].startswith("loadlab") for tag in tags)

    def ancestry(image_id: str) -> list[str]:
        chain = []
        while image_id in listing and image_id not in chain:
            chain.append(image_id)
            image_id = listing[image_id].get("ParentId") or ""
        return chain

    removable = {}
    for image_id, image in listing.items():
        tags = [t for t in (image.get("RepoTags") or []) if t != "<none>:<none>"]
        chain = ancestry(image_id)
        from_base = any(b in chain for b in base_ids)
        if ours(tags) or (image.get("Labels") or {}).get(BUILD_HASH_LABEL) or (from_base and not tags):
            removable[image_id] = (len(chain), tags)
    removed, refused = [], []
    for image_id, (_, tags) in sorted(removable.items(), key=lambda item: -item[1][0]):  # deepest (children) first
        try:
            client.api.remove_image(image_id, force=True)
            removed += tags or [image_id.split(":")[-1][:12]]
        except docker.errors.NotFound:
            continue  # went with a child removed before it
        except docker.errors.APIError as error:
            refused.append(f"{tags or image_id[:19]}: {error.explanation or error}")
    UNAVAILABLE_BUILDS_FILE.unlink(missing_ok=True)
    if refused:
        raise BuildError("could not remove every loadlab image (another image may be built on loadlab/base):\n"
                         + "\n".join(refused))
    return sorted(set(removed))
