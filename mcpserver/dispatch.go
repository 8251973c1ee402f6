package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// The protocol's methods. serve (session.go) hands every request to
// dispatch, which answers it:
//
//   - a request of protocol 2026-07-28 or later names its version in
//     _meta with the client's capabilities (and, if it wants log messages,
//     its log level); such a request of a method that version removed
//     (initialize, ping, logging/setLevel, resources/subscribe and
//     unsubscribe) is METHOD_NOT_FOUND, as are server/discover and
//     subscriptions/listen without it. Its result carries resultType, the
//     server's identity in _meta, and, for lists and reads, cache hints;
//   - params that do not decode into the method's parameters are
//     INVALID_REQUEST ("unparsable"); params that decode but are wrong
//     (an unknown tool or prompt, a bad cursor or log level) are
//     INVALID_PARAMS; a resource that does not exist is
//     RESOURCE_NOT_FOUND, or INVALID_PARAMS from 2026-07-28 on;
//   - an unknown method is METHOD_NOT_FOUND, a method of a capability the
//     server does not declare (tasks; prompts or completion when nothing
//     serves them) too;
//   - an error from a handler, and a panic anywhere, is INTERNAL_ERROR.

// era is what a request says of its protocol version.
type era struct {
	modern   bool   // 2026-07-28 or later: no session, versions in _meta
	version  string // the version _meta names, if any
	logLevel mcp.LoggingLevel
}

// reqError is an error response to a request.
type reqError struct {
	code int
	msg  string
	data any
}

func (e *reqError) response() mcp.JSONRPCMessage {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
		Error: mcp.NewJSONRPCErrorDetails(e.code, e.msg, e.data)}
}

func errorf(code int, format string, args ...any) *reqError {
	return &reqError{code: code, msg: fmt.Sprintf(format, args...)}
}

// requestEra reads the protocol version a request names in _meta. A
// request of 2026-07-28 or later must name the client's capabilities and a
// version the server speaks.
func (s *Server) requestEra(params json.RawMessage) (era, *reqError) {
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return era{}, nil // a malformed body is reported by the method's decoding
	}
	version := p.Meta.ProtocolVersion()
	if !mcp.IsModernProtocol(version) {
		return era{version: version}, nil
	}
	e := era{modern: true, version: version, logLevel: p.Meta.LogLevel()}
	if p.Meta.ClientCapabilities() == nil {
		return e, errorf(mcp.INVALID_PARAMS, "missing or invalid _meta field %s", mcp.MetaKeyClientCapabilities)
	}
	if !mcp.IsValidProtocolVersion(version) {
		r := mcp.UnsupportedProtocolVersionError{Version: version, Supported: s.versions}.JSONRPCError()
		return e, &reqError{code: r.Error.Code, msg: r.Error.Message, data: r.Error.Data}
	}
	return e, nil
}

// adoptMeta records what a request of 2026-07-28 or later says of its
// client on the session, as initialize does for earlier versions.
func (c *conn) adoptMeta(params json.RawMessage) {
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if info := p.Meta.ClientInfo(); info != nil {
		c.SetClientInfo(*info)
	}
	if caps := p.Meta.ClientCapabilities(); caps != nil {
		c.SetClientCapabilities(*caps)
	}
	c.Initialize()
}

// dispatch answers a request. It returns the response, result or error,
// its id left for the caller to write. A panic becomes an internal error.
func (s *Server) dispatch(ctx context.Context, cl *call, env *jsonrpc.Message, raw []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving a request", "method", env.Method, "panic", p, "stack", string(debug.Stack()))
			resp = (&reqError{code: mcp.INTERNAL_ERROR, msg: fmt.Sprintf("internal error: %v", p)}).response()
		}
	}()
	e, bad := s.requestEra(env.Params)
	if bad != nil {
		return bad.response()
	}
	cl.era = e
	if e.modern {
		cl.conn.adoptMeta(env.Params)
	}
	result, rerr := s.method(ctx, cl, env, raw)
	if rerr != nil {
		return rerr.response()
	}
	if e.modern {
		s.decorate(env.Method, result)
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(nil), result)
}

// method runs the request's method. The result is a pointer to one of
// mcp's result types.
func (s *Server) method(ctx context.Context, cl *call, env *jsonrpc.Message, raw []byte) (any, *reqError) {
	method := mcp.MCPMethod(env.Method)
	modern := cl.era.modern
	removed := func() *reqError {
		return errorf(mcp.METHOD_NOT_FOUND, "%q was removed in protocol version %s", method, mcp.ProtocolVersion20260728)
	}
	// decode decodes the request into req, as the method's parameters.
	decode := func(req any) *reqError {
		if err := json.Unmarshal(raw, req); err != nil {
			return errorf(mcp.INVALID_REQUEST, "unparsable %s request: %s", method, err)
		}
		return nil
	}
	switch method {
	case mcp.MethodInitialize:
		if modern {
			return nil, removed()
		}
		var req mcp.InitializeRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.initialize(cl, &req), nil

	case mcp.MethodPing:
		if modern {
			return nil, removed()
		}
		var req mcp.PingRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return &mcp.EmptyResult{}, nil

	case mcp.MethodServerDiscover:
		if !modern {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "%q requires protocol version %s or later", method, mcp.ProtocolVersion20260728)
		}
		var req mcp.DiscoverRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return &mcp.DiscoverResult{SupportedVersions: s.versions, Capabilities: s.capabilities(), Instructions: instructions}, nil

	case mcp.MethodSubscriptionsListen:
		if !modern {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "%q requires protocol version %s or later", method, mcp.ProtocolVersion20260728)
		}
		var req mcp.SubscriptionsListenRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.listen(ctx, cl, env.ID, req.Params.Notifications)

	case mcp.MethodSetLogLevel:
		if modern {
			return nil, removed()
		}
		var req mcp.SetLevelRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if !cl.Initialized() {
			return nil, errorf(mcp.INTERNAL_ERROR, "session not properly initialized")
		}
		switch l := req.Params.Level; l {
		case mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelNotice, mcp.LoggingLevelWarning,
			mcp.LoggingLevelError, mcp.LoggingLevelCritical, mcp.LoggingLevelAlert, mcp.LoggingLevelEmergency:
			cl.SetLogLevel(l)
		default:
			return nil, errorf(mcp.INVALID_PARAMS, "invalid logging level '%s'", l)
		}
		return &mcp.EmptyResult{}, nil

	case mcp.MethodResourcesList:
		var req mcp.ListResourcesRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		s.refreshLists(ctx)
		list, err := page(s.reg.resourceList(), req.Params.Cursor)
		if err != nil {
			return nil, errorf(mcp.INVALID_PARAMS, "%s", err)
		}
		return &mcp.ListResourcesResult{Resources: list}, nil

	case mcp.MethodResourcesTemplatesList:
		var req mcp.ListResourceTemplatesRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		list, err := page(s.reg.templateList(), req.Params.Cursor)
		if err != nil {
			return nil, errorf(mcp.INVALID_PARAMS, "%s", err)
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: list}, nil

	case mcp.MethodResourcesRead:
		var req mcp.ReadResourceRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.readResource(ctx, cl, req)

	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		if modern {
			return nil, removed()
		}
		var req mcp.SubscribeRequest // the same parameters as UnsubscribeRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if req.Params.URI == "" {
			return nil, errorf(mcp.INVALID_PARAMS, "uri is required")
		}
		if method == mcp.MethodResourcesUnsubscribe {
			cl.unsubscribe(req.Params.URI)
		} else if err := cl.subscribe(req.Params.URI); err != nil {
			return nil, errorf(notFoundCode(cl), "%s", err)
		}
		return &mcp.EmptyResult{}, nil

	case mcp.MethodPromptsList:
		if !s.servesPrompts() {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "prompts %s", errUnsupported)
		}
		var req mcp.ListPromptsRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if s.opts.Skills != nil {
			s.refreshSkills(ctx)
		}
		list, err := page(s.reg.promptList(), req.Params.Cursor)
		if err != nil {
			return nil, errorf(mcp.INVALID_PARAMS, "%s", err)
		}
		return &mcp.ListPromptsResult{Prompts: list}, nil

	case mcp.MethodPromptsGet:
		if !s.servesPrompts() {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "prompts %s", errUnsupported)
		}
		var req mcp.GetPromptRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if s.opts.Skills != nil && !s.skillsListed() {
			s.refreshSkills(ctx) // a client that gets a prompt without listing them first
		}
		return s.getPrompt(ctx, cl, req)

	case mcp.MethodToolsList:
		var req mcp.ListToolsRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		s.syncTools()
		list, err := page(s.reg.toolList(), req.Params.Cursor)
		if err != nil {
			return nil, errorf(mcp.INVALID_PARAMS, "%s", err)
		}
		return &mcp.ListToolsResult{Tools: list}, nil

	case mcp.MethodToolsCall:
		var req mcp.CallToolRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.callTool(ctx, cl, req)

	case mcp.MethodCompletionComplete:
		if !s.servesCompletion() {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "completions %s", errUnsupported)
		}
		var req mcp.CompleteRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.complete(ctx, req)

	case mcp.MethodTasksList, mcp.MethodTasksResult:
		if modern {
			return nil, removed()
		}
		return nil, errorf(mcp.METHOD_NOT_FOUND, "tasks %s", errUnsupported)
	case mcp.MethodTasksGet, mcp.MethodTasksCancel:
		return nil, errorf(mcp.METHOD_NOT_FOUND, "tasks %s", errUnsupported)
	}
	return nil, errorf(mcp.METHOD_NOT_FOUND, "Method %s not found", method)
}

var errUnsupported = errors.New("not supported")

// notFoundCode is the code of a resource that does not exist, in the
// request's protocol version.
func notFoundCode(cl *call) int {
	if cl.era.modern {
		return mcp.INVALID_PARAMS // as 2026-07-28 has it
	}
	return mcp.RESOURCE_NOT_FOUND
}

// handlerError is the error response for an error a handler returned.
func handlerError(cl *call, err error) *reqError {
	var required mcp.URLElicitationRequiredError
	if errors.As(err, &required) && !cl.era.modern {
		d := required.JSONRPCError().Error
		return &reqError{code: d.Code, msg: err.Error(), data: d.Data}
	}
	return &reqError{code: mcp.INTERNAL_ERROR, msg: err.Error()}
}

// initialize answers initialize: the protocol version the server speaks
// nearest the client's, and what the server is and can do. The session
// keeps the client's identity, capabilities and the version.
func (s *Server) initialize(cl *call, req *mcp.InitializeRequest) *mcp.InitializeResult {
	res := &mcp.InitializeResult{
		ProtocolVersion: mcp.NegotiateLegacyVersion(req.Params.ProtocolVersion),
		ServerInfo:      s.implementation(),
		Capabilities:    s.capabilities(),
		Instructions:    instructions,
	}
	c := cl.conn
	c.Initialize()
	c.SetClientInfo(req.Params.ClientInfo)
	c.SetClientCapabilities(req.Params.Capabilities)
	c.version.Store(res.ProtocolVersion)
	return res
}

// implementation is the server's identity.
func (s *Server) implementation() mcp.Implementation {
	return mcp.Implementation{Name: "praxis", Version: s.opts.Version}
}

// capabilities are the capabilities the server declares: tools (whose list
// changes with the engine's catalog), logging, resources (files can always
// be subscribed to), prompts and completion when something serves them.
func (s *Server) capabilities() mcp.ServerCapabilities {
	var caps mcp.ServerCapabilities
	caps.Tools = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	caps.Logging = &struct{}{}
	caps.Resources = &struct {
		Subscribe   bool `json:"subscribe,omitempty"`
		ListChanged bool `json:"listChanged,omitempty"`
	}{Subscribe: true, ListChanged: s.resourcesListChange()}
	if s.servesPrompts() {
		caps.Prompts = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: s.promptsListChange()}
	}
	if s.servesCompletion() {
		caps.Completions = &struct{}{}
	}
	return caps
}

func (s *Server) resourcesListChange() bool {
	if s.opts.Notes != nil || s.opts.Skills != nil {
		return true
	}
	for _, e := range s.opts.Extensions {
		if e.ResourcesListChanged {
			return true
		}
	}
	return false
}

func (s *Server) servesPrompts() bool {
	if s.opts.Skills != nil {
		return true
	}
	for _, e := range s.opts.Extensions {
		if len(e.Prompts) > 0 || e.PromptsListChanged {
			return true
		}
	}
	return false
}

func (s *Server) promptsListChange() bool {
	if s.opts.Skills != nil {
		return true
	}
	for _, e := range s.opts.Extensions {
		if e.PromptsListChanged {
			return true
		}
	}
	return false
}

func (s *Server) servesCompletion() bool {
	for _, e := range s.opts.Extensions {
		if e.Completer != nil {
			return true
		}
	}
	return false
}

// decorate adds to the result of a request of 2026-07-28 or later what
// that version requires: resultType, the server's identity in _meta, and
// cache hints on lists and reads (revalidate always, private).
func (s *Server) decorate(method string, result any) {
	r, ok := result.(mcp.ResultMetadata)
	if !ok {
		return
	}
	if r.GetResultType() == "" {
		r.SetResultType(mcp.ResultTypeComplete)
	}
	if meta := r.EnsureResultMeta(); meta != nil && meta.ServerInfo() == nil {
		meta.SetServerInfo(s.implementation())
	}
	switch mcp.MCPMethod(method) {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList,
		mcp.MethodResourcesRead, mcp.MethodServerDiscover:
		if c, ok := result.(mcp.CacheHintSetter); ok {
			if t, ok := result.(interface{ TTL() (int64, bool) }); ok {
				if _, set := t.TTL(); set {
					return
				}
			}
			c.SetCacheHints(0, mcp.CacheScopePrivate)
		}
	}
}

// readResource reads a resource: a listed one, or one a template matches.
func (s *Server) readResource(ctx context.Context, cl *call, req mcp.ReadResourceRequest) (any, *reqError) {
	read, args, ok := s.reg.reader(req.Params.URI)
	if !ok {
		return nil, errorf(notFoundCode(cl), "handler not found for resource URI '%s': %s", req.Params.URI, ErrResourceNotFound)
	}
	if args != nil {
		req.Params.Arguments = args
	}
	contents, err := read(ctx, req)
	if err != nil {
		if errors.Is(err, ErrResourceNotFound) || errors.Is(err, mcp.ErrResourceNotFound) {
			return nil, &reqError{code: notFoundCode(cl), msg: err.Error()}
		}
		return nil, handlerError(cl, err)
	}
	if contents == nil {
		contents = []mcp.ResourceContents{}
	}
	return &mcp.ReadResourceResult{Contents: contents}, nil
}

// getPrompt renders a prompt.
func (s *Server) getPrompt(ctx context.Context, cl *call, req mcp.GetPromptRequest) (any, *reqError) {
	p, ok := s.reg.prompt(req.Params.Name)
	if !ok {
		return nil, errorf(mcp.INVALID_PARAMS, "prompt '%s' not found: prompt not found", req.Params.Name)
	}
	res, err := p.handler(ctx, req)
	if err != nil {
		return nil, handlerError(cl, err)
	}
	if res == nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "prompt '%s' handler returned no result", req.Params.Name)
	}
	if res.Messages == nil && !res.NeedsInput() {
		withMessages := *res // the handler's result may be shared
		withMessages.Messages = []mcp.PromptMessage{}
		res = &withMessages
	}
	return res, nil
}

// callTool runs a tool call fastToolCall did not take: an extension's
// tool, an unknown one, or an engine tool called with more than a
// progress token in _meta.
func (s *Server) callTool(ctx context.Context, cl *call, req mcp.CallToolRequest) (any, *reqError) {
	t, ok := s.reg.tool(req.Params.Name)
	if !ok {
		return nil, errorf(mcp.INVALID_PARAMS, "tool '%s' not found: tool not found", req.Params.Name)
	}
	res, err := t.handler(ctx, req)
	if err != nil {
		return nil, handlerError(cl, err)
	}
	if res == nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "tool '%s' handler returned no result", req.Params.Name)
	}
	return res, nil
}

// complete answers completion/complete from the completer of the prompt
// or template the request names.
func (s *Server) complete(ctx context.Context, req mcp.CompleteRequest) (any, *reqError) {
	var (
		comp *mcp.Completion
		err  error
	)
	switch ref := req.Params.Ref.(type) {
	case mcp.PromptReference:
		if c := s.reg.completer(s.opts.Extensions, ref.Name, ""); c != nil {
			comp, err = c.CompletePromptArgument(ctx, ref.Name, req.Params.Argument, req.Params.Context)
		}
	case mcp.ResourceReference:
		if c := s.reg.completer(s.opts.Extensions, "", ref.URI); c != nil {
			comp, err = c.CompleteResourceArgument(ctx, ref.URI, req.Params.Argument, req.Params.Context)
		}
	default:
		return nil, errorf(mcp.INVALID_REQUEST, "unknown reference type: %v", ref)
	}
	if err != nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "%s", err)
	}
	if comp == nil {
		comp = &mcp.Completion{}
	}
	res := &mcp.CompleteResult{Completion: *comp}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res, nil
}

// listen serves subscriptions/listen: it establishes the subscriptions the
// server can serve of those the client asks for, acknowledges them on the
// request's stream, and holds the stream open until the request is
// cancelled or the session ends, unless nothing was established.
func (s *Server) listen(ctx context.Context, cl *call, rawID json.RawMessage, want mcp.SubscriptionFilter) (any, *reqError) {
	var id any
	json.Unmarshal(rawID, &id)
	var allowed mcp.SubscriptionFilter
	allowed.ToolsListChanged = want.ToolsListChanged
	allowed.PromptsListChanged = want.PromptsListChanged && s.servesPrompts() && s.promptsListChange()
	allowed.ResourcesListChanged = want.ResourcesListChanged && s.resourcesListChange()
	if len(want.ResourceSubscriptions) > 0 {
		allowed.ResourceSubscriptions = append([]string(nil), want.ResourceSubscriptions...)
	}
	var established []string
	defer func() {
		for _, uri := range established {
			cl.unsubscribe(uri)
		}
	}()
	for _, uri := range allowed.ResourceSubscriptions {
		if err := cl.subscribe(uri); err != nil {
			return nil, errorf(mcp.INVALID_PARAMS, "subscribing to %q: %s", uri, err)
		}
		established = append(established, uri)
	}
	ack := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationSubscriptionsAcknowledged,
		Params: mcp.NotificationParams{
			Meta:             map[string]any{mcp.MetaKeySubscriptionID: id},
			AdditionalFields: map[string]any{"notifications": allowed},
		},
	}}
	cl.sendNotification(ack)
	if !allowed.IsEmpty() {
		<-ctx.Done()
	}
	res := &mcp.SubscriptionsListenResult{}
	res.EnsureResultMeta().SetSubscriptionID(id)
	return res, nil
}
