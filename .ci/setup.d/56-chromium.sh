# Sourced by .ci/run. Installs Chromium for the agent service's page test
# (driven headless with chromedp) and makes it mandatory: with
# PRAXIS_REQUIRE_BROWSER=1 the test fails instead of skipping when no
# Chromium is found.
if ! command -v chromium >/dev/null 2>&1; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version
export PRAXIS_REQUIRE_BROWSER=1
