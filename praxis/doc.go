// Package praxis is the Praxis tool engine: a workspace confined through
// os.Root, a catalog of tools an agent uses on a code base, and the error
// contract those tools share. It knows nothing of MCP, model providers or
// the command line; those front ends call tools through the Catalog.
//
// Every built-in tool is declared from Go types with [NewTool]: its
// arguments are a struct whose tags give the input schema's descriptions,
// enums, defaults and bounds, its result a struct that is the call's
// structured content and renders the text the model reads. Both schemas
// are generated (github.com/google/jsonschema-go), and the Catalog
// validates every call's arguments against the input schema before the
// handler runs. External tools (an MCP server's, say) join the same
// Catalog as a [Tool] with a raw schema.
//
// # Map of the package
//
//	doc.go          this map
//	engine.go       Options, Engine: opening a workspace, building the catalog
//	tool.go         Tool, Result, Annotations, NewTool, progress reports
//	schema.go       schemas from Go types (struct tags) and argument validation
//	catalog.go      Catalog: tools by name, validation, panics as E_INTERNAL
//	errors.go       the E_* codes and *Error, the one error contract
//	describe.go     the embedded *.md descriptions, one per tool
//	workspace.go    Workspace: confinement through os.Root, atomic writes
//	history.go      earlier versions, so anchors survive the engine's own edits
//	files.go        read_file, write_file, list_dir
//	edit.go         edit_file: arguments, anchors, applying ops in memory
//	edit_commit.go  edit_file: writing a batch all or nothing, its result text
//	search.go       what glob and grep share: directories, walk options
//	glob.go, grep.go
//	bash.go         bash, job_output, job_kill, the shell and its jobs
//	memory.go       write_memory, read_memory, list_memory, search_memory,
//	                delete_memory, and the store's lock (memory_lock_*.go)
//	skills.go       list_skills, load_skill, read_skill_file
//	*.md            each tool's description, named after the tool
//	testdata/golden one transcript per tool call: workspace, call, exact result
//
// Subpackages: hashline (tags, rendering, anchors, applying edits to
// bytes; no I/O) and internal/walk, internal/match (the searches' walker
// and matcher).
package praxis
