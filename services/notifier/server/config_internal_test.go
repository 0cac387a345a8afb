package server

import (
	"slices"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
)

// TestValidateKeepsWhatItParsed holds "configuration parsed once":
// config.Load's Validate leaves the typed values Run uses, and the chats
// derived from them need no second parse.
func TestValidateKeepsWhatItParsed(t *testing.T) {
	cfg, err := config.Load[Config](config.MapLookup(map[string]string{
		"DATA_DIR":                t.TempDir(),
		"TELEGRAM_CHAT_ID":        "-100111",
		"NOTIFIER_ROUTES":         "severity=critical:-100123,team=db&env=prod:@dbteam",
		"NOTIFIER_CHAT_RATE":      "20/h",
		"TELEGRAM_APPROVERS":      "42,@ana",
		"NOTIFIER_ACTION_USERS":   "@bob",
		"NOTIFIER_ENRICH_ENGINE":  "local",
		"TELEGRAM_ALLOWED_CHATS":  "",
		"NOTIFIER_DEDUP_WINDOW":   "5m",
		"NOTIFIER_ENRICH_TIMEOUT": "10s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.parsed
	if !p.ok {
		t.Fatal("Validate left no parsed values")
	}
	if len(p.routes) != 2 || p.routes[0].ChatID != "-100123" || p.routes[1].ChatID != "@dbteam" {
		t.Errorf("routes = %+v, want the two routes as given", p.routes)
	}
	if p.chatRate != (chat.Rate{N: 20, Per: time.Hour}) {
		t.Errorf("chat rate = %+v, want 20 per hour", p.chatRate)
	}
	if !p.approvers.Restricted() || p.actionUsers.Usernames()[0] != "bob" {
		t.Errorf("approvers %+v, action users %v; want both restricted as given", p.approvers, p.actionUsers.Usernames())
	}
	if got, want := cfg.configuredChats(), []string{"-100111", "-100123", "@dbteam"}; !slices.Equal(got, want) {
		t.Errorf("configured chats = %v, want %v", got, want)
	}
	if got, want := cfg.allowedChats(), []int64{-100111, -100123}; !slices.Equal(got, want) {
		t.Errorf("allowed chats = %v, want %v (the numeric configured ones)", got, want)
	}
}
