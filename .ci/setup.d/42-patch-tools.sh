# Sourced by .ci/run. Installs git and GNU patch, which the patch_file and
# diff tests compare Praxis with (git apply, patch -p1), and makes those
# tests mandatory: with PRAXIS_REQUIRE_PATCH_TOOLS=1 a test that would skip
# for want of them fails instead.
if ! command -v git >/dev/null 2>&1 || ! command -v patch >/dev/null 2>&1; then
	apt-get update -qq && apt-get install -y -qq git patch >/dev/null
fi
git --version
patch --version | head -1
export PRAXIS_REQUIRE_PATCH_TOOLS=1
