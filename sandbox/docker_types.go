package sandbox

// The bodies of the Docker Engine API requests and responses the docker
// runner sends and reads, with the members it uses, named as the API
// names them. They are the project's own rather than the API module's
// types: those link image references, digests and their regular
// expressions into every praxis process, whose start pays for their
// initialisation whether it runs a container or not.

// engineMount is a mount of a container (HostConfig.Mounts).
type engineMount struct {
	Type     string // "bind"
	Source   string
	Target   string
	ReadOnly bool `json:",omitempty"`
}

// engineHostConfig is the host side of a container's configuration.
type engineHostConfig struct {
	Mounts      []engineMount
	CapDrop     []string
	SecurityOpt []string
	Init        *bool `json:",omitempty"`
	AutoRemove  bool
	IpcMode     string
	Tmpfs       map[string]string `json:",omitempty"`
	NetworkMode string            `json:",omitempty"`
	PidsLimit   *int64            `json:",omitempty"`
	Memory      int64             `json:",omitempty"`
	MemorySwap  int64             `json:",omitempty"`
	NanoCPUs    int64             `json:"NanoCpus,omitempty"`
}

// engineCreateRequest is the body of POST /containers/create: the
// container's configuration with its host configuration beside it.
type engineCreateRequest struct {
	Image        string
	User         string
	WorkingDir   string
	Entrypoint   []string
	OpenStdin    bool
	StdinOnce    bool
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	Labels       map[string]string
	HostConfig   *engineHostConfig
}

// engineExecCreateRequest is the body of POST /containers/{id}/exec.
type engineExecCreateRequest struct {
	User         string
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	Env          []string
	WorkingDir   string
	Cmd          []string
}

// engineExecStartRequest is the body of POST /exec/{id}/start.
type engineExecStartRequest struct {
	Detach bool
	Tty    bool
}

// engineID is the answer of a request that creates an object.
type engineID struct {
	ID string `json:"Id"`
}

// engineContainer is one container of GET /containers/json.
type engineContainer struct {
	ID     string `json:"Id"`
	State  string // "running", "exited", ...
	Labels map[string]string
}

// engineExec is the state of a command, GET /exec/{id}/json.
type engineExec struct {
	Running  bool
	ExitCode *int
	Pid      int
}

// engineErrorBody is the body of an error answer.
type engineErrorBody struct {
	Message string `json:"message"`
}
