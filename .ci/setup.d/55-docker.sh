# Sourced by .ci/run. Installs Docker (Debian's docker.io) for the sandbox's
# isolation docker, starts the daemon if none answers, and makes the docker
# tests mandatory: with PRAXIS_REQUIRE_DOCKER=1 a test that would skip for
# want of an engine fails instead. The tests build their image locally from
# the host's own programs; no registry is needed.
if ! command -v dockerd >/dev/null 2>&1; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
	dockerd >/var/log/dockerd.log 2>&1 &
	for _ in $(seq 1 60); do
		docker info >/dev/null 2>&1 && break
		sleep 1
	done
fi
docker version --format 'docker engine {{.Server.Version}}, API {{.Server.APIVersion}}' ||
	{ echo "warning: dockerd did not start; see /var/log/dockerd.log; the docker tests will fail" >&2; tail -20 /var/log/dockerd.log >&2 || true; }
export PRAXIS_REQUIRE_DOCKER=1
