# Sourced by .ci/run. Installs ripgrep, which the grep and glob tests compare
# results with, and fd, which scripts/bench-search.sh compares glob with;
# then makes a missing rg a test failure rather than a skip.
if ! command -v rg >/dev/null 2>&1 || ! { command -v fd >/dev/null 2>&1 || command -v fdfind >/dev/null 2>&1; }; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep fd-find >/dev/null
fi
export PRAXIS_REQUIRE_RG=1
