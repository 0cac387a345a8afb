package console

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// axeScript is axe-core, pinned in web/console/package-lock.json and
// installed by `npm ci` there (make test-console runs it before the Go
// tests).
const axeScript = "../../web/console/node_modules/axe-core/axe.min.js"

// loadAxe reads axe-core; without it the accessibility check skips
// locally and fails in CI.
func loadAxe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(axeScript)
	if err != nil {
		msg := "axe-core is not installed (run `make test-console` or `npm ci` in web/console): " + err.Error()
		if os.Getenv("GROUNDCREW_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return string(b)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// axeCheck runs axe-core on the page the tab shows and returns its serious
// and critical violations.
func axeCheck(t *testing.T, su *suite, axe string) []axeViolation {
	t.Helper()
	var raw string
	su.run(t, 30*time.Second,
		chromedp.Evaluate(axe, nil),
		chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, &raw,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	var all []axeViolation
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		t.Fatalf("reading axe's answer: %v", err)
	}
	var bad []axeViolation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad
}

// checkPagesAccessible opens each page (signed in) and fails on serious
// axe-core violations, in light and dark colour schemes.
func checkPagesAccessible(t *testing.T, su *suite, pages map[string]string) {
	axe := loadAxe(t)
	for _, scheme := range []string{"light", "dark"} {
		su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error {
			return emulateScheme(ctx, scheme)
		}))
		for path, ready := range pages {
			su.open(t, path, ready)
			for _, v := range axeCheck(t, su, axe) {
				var where []string
				for _, n := range v.Nodes {
					b, _ := json.Marshal(n.Target)
					where = append(where, string(b))
				}
				t.Errorf("%s (%s): %s %s: %s at %s", path, scheme, v.Impact, v.ID, v.Help, strings.Join(where, ", "))
			}
		}
	}
	su.run(t, 5*time.Second, chromedp.ActionFunc(func(ctx context.Context) error { return emulateScheme(ctx, "light") }))
}

// emulateScheme makes the tab report prefers-color-scheme: scheme.
func emulateScheme(ctx context.Context, scheme string) error {
	return emulation.SetEmulatedMedia().
		WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}).
		Do(ctx)
}
