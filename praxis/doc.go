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
//	doc.go             this map
//	engine.go          Options, Engine: opening a workspace; the catalog, one
//	                   line per built-in tool (Engine.tools)
//	tool.go            Tool, Result, Annotations, NewTool, progress reports
//	schema.go          schemas from Go types (struct tags) and argument validation
//	tool_schemas.go    the built-in tools' listed schemas, generated ahead into
//	                   tool_schemas.json (TestToolSchemas -update)
//	catalog.go         Catalog: tools by name, validation, panics as E_INTERNAL
//	errors.go          the E_* codes and *Error, the one error contract
//	describe.go        the embedded *.md descriptions, one per tool
//
// One file per tool, named after it, its description beside it (read_file.go
// and read_file.md):
//
//	read_file.go  write_file.go  list_dir.go  edit_file.go  patch_file.go
//	glob.go  grep.go
//	bash.go  job_output.go  job_kill.go
//	write_memory.go  read_memory.go  list_memory.go  search_memory.go  delete_memory.go
//	list_skills.go  load_skill.go  read_skill_file.go
//
// What tools share, in files named for the job:
//
//	workspace.go       Workspace: confinement through os.Root, atomic writes
//	text.go            loading a file as text for hashline (read_file, edit_file)
//	protect.go         protected files and the engine's state: what may be written
//	commit.go          writing a batch of files all or nothing, under one lock
//	diff.go            unified diffs (go-diff), exact to the byte, no-newline marker
//	budget.go          the change budget (Options.MaxChangedLines)
//	anchor_candidates.go  the candidate lines an ambiguous anchor could mean
//	history.go         the engine's own edits between versions, line by line
//	versions.go        the version store: contents of the versions served, in
//	                   memory and on disk under the state directory
//	relocate.go        relocating an edit's anchors from the earlier version
//	                   they were read from: line maps, the rule, the sources
//	notices.go         Session, Notice: telling a session of files changed on disk
//	notice_board.go    what each session was shown, the file watcher, subscriptions
//	search.go          what glob and grep share: directories, walk options
//	jobs.go            the shell behind bash, its background jobs and their reports
//	memory_store.go    the memory notes' store: keys, files, limits, its committer
//	skills.go          the engine's skills catalog and its errors
//	*.md               each tool's description, named after the tool
//	testdata/golden    one transcript per tool call: workspace, call, exact result
//
// Subpackages: hashline (tags, rendering, anchors, applying edits to
// bytes; no I/O), patch (parsing unified diffs and the Begin Patch
// envelope, applying hunks to bytes; no I/O) and internal/walk,
// internal/match (the searches' walker and matcher).
package praxis
