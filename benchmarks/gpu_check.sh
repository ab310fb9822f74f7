#!/usr/bin/env bash
# Issue 32's device check (benchmarks/gpu_check.py) as one device call: installs the pure-Python wheels
# carried in .whl/ (gymnasium and what it needs: the device image lacks them), then runs the check with
# this checkout's src/ first on the path. Arguments go to gpu_check.py, e.g.
#   bash benchmarks/gpu_check.sh --budget-s 540 --out "$OUT"
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    site=$(mktemp -d /tmp/gpu_check_site.XXXXXX)
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "$PYTHON" benchmarks/gpu_check.py "$@"
