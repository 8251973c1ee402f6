package mcpclient

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/praxis-tools/praxis/praxis"
)

// TestImageContentIsKept checks that an MCP tool's image content becomes
// an image of the result, named in its text, in order.
func TestImageContentIsKept(t *testing.T) {
	res := convertResult(&mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent("two shots"),
		mcp.NewImageContent("iVBORw0KGgo=", "image/png"),
		mcp.NewImageContent("/9j/4AAQ", "image/jpeg"),
	}})
	want := []praxis.Image{{MIMEType: "image/png", Data: "iVBORw0KGgo="}, {MIMEType: "image/jpeg", Data: "/9j/4AAQ"}}
	if len(res.Images) != 2 || res.Images[0] != want[0] || res.Images[1] != want[1] {
		t.Errorf("images %+v, want %+v", res.Images, want)
	}
	if !strings.Contains(res.Text, "two shots") || strings.Count(res.Text, "[image: ") != 2 {
		t.Errorf("text %q", res.Text)
	}
	if res := convertResult(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("no image")}}); res.Images != nil {
		t.Errorf("a text result has images: %+v", res.Images)
	}
}
