package service

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/praxis-tools/praxis/agent"
)

// browser finds a Chromium to drive, or skips the test saying why.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PRAXIS_REQUIRE_BROWSER") != "" {
		t.Fatal("PRAXIS_REQUIRE_BROWSER is set and no Chromium is installed")
	}
	t.Skip("no Chromium on this machine (Debian: apt-get install chromium); the page is not tested")
	return ""
}

// TestPage opens the embedded page in headless Chromium: it lists the
// session, shows its tool call live, cancels the turn, sends a follow-up
// and shows the answer. The screenshot is saved in the test's artifact
// directory (go test -artifacts keeps it).
func TestPage(t *testing.T) {
	exe := browser(t)
	turns := []agent.ScriptTurn{
		// An edit (the test's catalog has no edit_file: the page shows the
		// call's operations all the same).
		{ToolCalls: []agent.ScriptCall{{Name: "edit_file", Input: json.RawMessage(`{"path":"a.txt","ops":[{"op":"replace_line","tag":"2:ab12","new_text":"BETA"}]}`)}}},
		{Text: "Reading the file.", ToolCalls: []agent.ScriptCall{{Name: "read_file", Input: json.RawMessage(`{"path":"block.txt"}`)}}},
		{Text: "Follow-up answered."},
	}
	_, srv := newTestService(t, t.TempDir(), turns, nil)
	id := create(t, srv, `{"task":"read block.txt"}`)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1200, 800))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Steps(steps...)); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	item := chromedp.CSS(`#sessions li[data-id="` + id + `"]`)
	// The list shows the session; clicking it opens it. The tool call
	// appears, with its arguments, while it runs.
	do(chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(item), chromedp.Click(item),
		chromedp.WaitVisible(chromedp.CSS(`details.tool[data-call="call_2_1"] summary`)))
	tool := text(`details.tool[data-call="call_2_1"] summary`)
	edit, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('details.tool .diff div')].map(e => e.textContent).join('|')`))
	if err != nil {
		t.Fatal(err)
	}
	if edit != "@@ replace_line 2:ab12|+ BETA" {
		t.Errorf("the edit shows %q", edit)
	}
	do(chromedp.Click(chromedp.CSS(`#cancel`)), chromedp.WaitVisible(chromedp.CSS(`.stop[data-stop="cancelled"]`)))
	stop := text(`.stop[data-stop="cancelled"]`)
	do(chromedp.SendKeys(chromedp.CSS(`#followup`), "and now?"), chromedp.Click(chromedp.CSS(`#send`)),
		chromedp.WaitVisible(chromedp.CSS(`.stop[data-stop="completed"]`)))
	answer, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.text')].map(e => e.textContent).join('|')`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tool, "read_file") || !strings.Contains(tool, "block.txt") {
		t.Errorf("the tool call shows %q", tool)
	}
	if !strings.Contains(stop, "cancelled") {
		t.Errorf("the stop line says %q", stop)
	}
	if answer != "Reading the file.|Follow-up answered." {
		t.Errorf("the texts shown: %q", answer)
	}
	out := filepath.Join(t.ArtifactDir(), "page.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
}
