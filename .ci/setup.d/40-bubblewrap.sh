# Sourced by .ci/run. Installs bubblewrap for the sandbox's bwrap runner and
# makes its tests mandatory: with PRAXIS_REQUIRE_BWRAP=1 a test that would
# skip for want of bwrap fails instead.
if ! command -v bwrap >/dev/null 2>&1; then
	apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
fi
bwrap --version
# Show at once whether bwrap can build a sandbox here; the tests report the
# same failure with its reason.
bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net --die-with-parent true ||
	echo "warning: bwrap is installed but cannot build a sandbox on this machine; the bwrap tests will fail" >&2
export PRAXIS_REQUIRE_BWRAP=1
