# Python tools from PyPI for the test and fuzz scripts, in a virtual environment of their own under
# .build/ (never the user's own Python). Sourced:
#   python_tools PACKAGE…   make .build/python-tools (python3 -m venv) when missing, and pip-install
#                           there each PACKAGE (NAME or NAME==VERSION) not installed yet (at that
#                           version); sets PYTHON_TOOLS (the folder:
#                           its bin/ holds python and the tools' commands). On failure (no venv
#                           module, no network) returns 1 with the reason in PYTHON_TOOLS_SKIP.
#   unavailable WHAT REASON a check that cannot run: under CI (.ci/run sets CI) a failure, since a
#                           green run without its checks would say nothing; elsewhere a printed skip.

PYTHON_TOOLS=
PYTHON_TOOLS_SKIP=

python_tools() {
  local venv=.build/python-tools missing=() package
  if [ ! -x "$venv/bin/python" ]; then
    mkdir -p .build
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      rm -rf "$venv"
      # Debian's python3 makes one only with python3-venv, installed here as root.
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing python3-venv (apt)…"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; } >/dev/null 2>&1 || true
      fi
      python3 -m venv "$venv" >/dev/null 2>&1 || {
        rm -rf "$venv"
        PYTHON_TOOLS_SKIP="python3 cannot make a virtual environment (Debian: apt-get install python3-venv)"
        return 1
      }
    fi
  fi
  for package in "$@"; do
    # A requirement: a distribution's name as pip knows it (httpx-sse), and maybe `==VERSION`.
    local name=${package%%==*} installed
    installed=$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')
    if [ -z "$installed" ] || { [ "$name" != "$package" ] && [ "$installed" != "${package#*==}" ]; }; then
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} (pip, into $venv)…"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}" >/dev/null 2>&1 || {
      PYTHON_TOOLS_SKIP="pip cannot install ${missing[*]} into $venv (offline?)"
      return 1
    }
  fi
  PYTHON_TOOLS=$venv
}

# unavailable WHAT REASON: a check that cannot run. Under CI, a failure (returns 1); elsewhere a
# printed skip (returns 0).
unavailable() {
  if [ -n "${CI:-}" ]; then
    echo "$1 cannot run: $2, and CI must run it"
    return 1
  fi
  echo "$1 skipped: $2"
}
