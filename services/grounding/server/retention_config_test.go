package server

import (
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/config"
)

// TestRetentionConfig: GROUNDING_MESSAGE_RETENTION keeps messages by
// default and takes a duration; GROUNDING_ARCHIVE_MODE is compress or
// desensitize; anything else is refused with the variable's name.
func TestRetentionConfig(t *testing.T) {
	tests := []struct {
		env     map[string]string
		keep    time.Duration
		wantErr string
	}{
		{env: map[string]string{}, keep: 0},
		{env: map[string]string{"GROUNDING_MESSAGE_RETENTION": "8760h", "GROUNDING_ARCHIVE_MODE": "desensitize"}, keep: 8760 * time.Hour},
		{env: map[string]string{"GROUNDING_MESSAGE_RETENTION": "KEEP"}, keep: 0},
		{env: map[string]string{"GROUNDING_MESSAGE_RETENTION": "forever"}, wantErr: "GROUNDING_MESSAGE_RETENTION"},
		{env: map[string]string{"GROUNDING_MESSAGE_RETENTION": "-1h"}, wantErr: "GROUNDING_MESSAGE_RETENTION"},
		{env: map[string]string{"GROUNDING_ARCHIVE_MODE": "delete"}, wantErr: "GROUNDING_ARCHIVE_MODE"},
	}
	for _, tt := range tests {
		vars := map[string]string{"DATA_DIR": t.TempDir()}
		for k, v := range tt.env {
			vars[k] = v
		}
		// Load validates too.
		cfg, err := config.Load[Config](config.MapLookup(vars))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Load(%v) = %v, want an error naming %s", tt.env, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Load(%v) = %v", tt.env, err)
		}
		if got, _ := cfg.messageRetention(); got != tt.keep {
			t.Errorf("message retention of %v = %v, want %v", tt.env, got, tt.keep)
		}
		// Run reads what Validate parsed, not the text again.
		if got := cfg.parsed.messageMaxAge; !cfg.parsed.ok || got != tt.keep {
			t.Errorf("parsed message retention of %v = %v (parsed: %v), want %v", tt.env, got, cfg.parsed.ok, tt.keep)
		}
	}
}
