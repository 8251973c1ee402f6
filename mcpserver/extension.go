package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// Extension adds MCP features beyond the engine's to a Server: tools,
// resources, resource templates and prompts with their handlers, and
// argument completion. The conformance fixtures mount themselves this way.
// Payloads are the types of github.com/mark3labs/mcp-go/mcp; the protocol
// around them (dispatch, sessions, transports) is the Server's.
//
// An extension's tools must not take the names of engine tools: an engine
// tool of the same name is the one served.
type Extension struct {
	Tools             []ExtensionTool
	Resources         []ExtensionResource
	ResourceTemplates []ExtensionResourceTemplate
	Prompts           []ExtensionPrompt
	// Completer, if set, completes the arguments of this extension's
	// prompts and resource templates, and of any other prompt or template
	// no extension owns; the server then declares the completions
	// capability.
	Completer Completer
	// ResourcesListChanged and PromptsListChanged declare that the lists of
	// resources and prompts may change while a client is connected (the
	// server declares it anyway when it serves memory notes or skills).
	ResourcesListChanged bool
	PromptsListChanged   bool
}

// ExtensionTool is a tool and the handler that runs its calls. A call that
// fails as a tool call returns a result with IsError set; an error from the
// handler is a protocol error (internal error) for the request.
type ExtensionTool struct {
	Tool    mcp.Tool
	Handler func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// ExtensionResource is a listed resource with a fixed URI and the handler
// that reads it.
type ExtensionResource struct {
	Resource mcp.Resource
	Read     ResourceReader
}

// ExtensionResourceTemplate is a template of resource URIs and the handler
// that reads the resources whose URI matches it. The handler finds the
// template's variables in req.Params.Arguments, each a []string of the
// values matched.
type ExtensionResourceTemplate struct {
	Template mcp.ResourceTemplate
	Read     ResourceReader
}

// ResourceReader reads a resource. An error wrapping ErrResourceNotFound
// answers the request with the protocol's resource-not-found error; any
// other error is an internal error.
type ResourceReader func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error)

// ExtensionPrompt is a prompt and the handler that renders it. An error
// from the handler is an internal error for the request.
type ExtensionPrompt struct {
	Prompt  mcp.Prompt
	Handler func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error)
}

// Completer completes the arguments of prompts and resource templates
// (completion/complete). A nil completion is an empty one.
type Completer interface {
	// CompletePromptArgument completes an argument of the prompt named
	// prompt.
	CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, c mcp.CompleteContext) (*mcp.Completion, error)
	// CompleteResourceArgument completes a variable of the resource
	// template uri.
	CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, c mcp.CompleteContext) (*mcp.Completion, error)
}

// ErrResourceNotFound is the error, possibly wrapped, a ResourceReader
// returns for a resource that does not exist.
var ErrResourceNotFound = errors.New("resource not found")

// ErrServerRequestsUnsupported is the error of a request to the client
// (sampling, elicitation, roots) made while serving a request of protocol
// 2026-07-28 or later, which has no requests from the server.
var ErrServerRequestsUnsupported = errors.New("server-initiated requests are not supported in protocol version " +
	mcp.ProtocolVersion20260728 + " or later")

// errNotInitialized is the error of a notification sent for a session
// that has not been initialized.
var errNotInitialized = errors.New("notification channel not initialized")

// Session is the client session a request is served for, as the handlers
// of an extension see it: they send it notifications that belong to the
// request (progress, log messages), written before the request's
// response, and make requests to the client on the request's stream.
type Session struct{ cl *call }

// SessionFromContext returns the session of the request ctx serves, or nil
// outside a request's handler.
func SessionFromContext(ctx context.Context) *Session {
	if cl := callFromContext(ctx); cl != nil {
		return &Session{cl}
	}
	return nil
}

// ID returns the session's ID: the HTTP session ID, a generated one on
// stdio, "" for a request of a protocol without sessions.
func (s *Session) ID() string { return s.cl.id }

// ClientCapabilities returns the capabilities the client declared.
func (s *Session) ClientCapabilities() mcp.ClientCapabilities { return s.cl.GetClientCapabilities() }

// Notify sends the client the notification method with params. It fails
// when the session has not been initialized.
func (s *Session) Notify(method string, params map[string]any) error {
	if !s.cl.Initialized() {
		return errNotInitialized
	}
	s.cl.sendNotification(newNotification(method, params))
	return nil
}

// Progress reports progress on the request to the client, for the
// request's progress token (from req.Params.Meta). total and message are
// left out when zero.
func (s *Session) Progress(token mcp.ProgressToken, progress, total float64, message string) error {
	params := map[string]any{"progressToken": token, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	return s.Notify(string(mcp.MethodNotificationProgress), params)
}

// Log sends the client a log message (notifications/message) if level is
// at or above the level the client asked for: with logging/setLevel (info
// by default), or, from protocol 2026-07-28 on, in the request's _meta
// (none unless it asks). It fails when the session has not been
// initialized.
func (s *Session) Log(level mcp.LoggingLevel, logger string, data any) error {
	cl := s.cl
	if !cl.Initialized() {
		return errNotInitialized
	}
	min := cl.GetLogLevel()
	if cl.era.modern {
		if cl.era.logLevel == "" {
			return nil
		}
		min = cl.era.logLevel
	}
	if !level.ShouldSendTo(min) {
		return nil
	}
	cl.sendNotification(newNotification(string(mcp.MethodNotificationMessage), map[string]any{
		"level": level, "logger": logger, "data": data,
	}))
	return nil
}

// CreateMessage asks the client to sample its model (sampling/createMessage).
//
// Deprecated: the protocol deprecates sampling as of 2026-07-28; it is
// here for clients of earlier versions and for the conformance fixtures.
func (s *Session) CreateMessage(ctx context.Context, params mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if err := s.serverRequestsAllowed(mcp.MethodSamplingCreateMessage); err != nil {
		return nil, err
	}
	return s.cl.requestSampling(ctx, params)
}

// Elicit asks the client's user for input (elicitation/create).
func (s *Session) Elicit(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	if err := s.serverRequestsAllowed(mcp.MethodElicitationCreate); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return s.cl.requestElicitation(ctx, params)
}

// ListRoots asks the client for its roots (roots/list).
func (s *Session) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	if err := s.serverRequestsAllowed(mcp.MethodListRoots); err != nil {
		return nil, err
	}
	return s.cl.listRoots(ctx)
}

func (s *Session) serverRequestsAllowed(method mcp.MCPMethod) error {
	if s.cl.era.modern {
		return fmt.Errorf("%q: %w", method, ErrServerRequestsUnsupported)
	}
	return nil
}

// newNotification is a notification with params as they are.
func newNotification(method string, params map[string]any) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: method,
		Params: mcp.NotificationParams{AdditionalFields: params},
	}}
}
