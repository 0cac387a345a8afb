package approval

import (
	"testing"

	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
)

func TestParse(t *testing.T) {
	const id = "0193a5b2-7c1e-7d2f-9a8b-0123456789ab"
	tests := []struct {
		data    string
		wantID  string
		wantDec Decision
		wantOK  bool
	}{
		{"approval:" + id + ":approve", id, Approve, true},
		{"approval:" + id + ":reject", id, Reject, true},
		{"approval:" + id + ":maybe", "", 0, false},
		{"approval:" + id, "", 0, false},
		{"approval:not-a-uuid:approve", "", 0, false},
		{"ack:" + id, "", 0, false},
		{"", "", 0, false},
	}
	for _, tt := range tests {
		id, d, ok := Parse(tt.data)
		if id != tt.wantID || d != tt.wantDec || ok != tt.wantOK {
			t.Errorf("Parse(%q) = %q, %v, %v; want %q, %v, %v", tt.data, id, d, ok, tt.wantID, tt.wantDec, tt.wantOK)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		user          chat.User
		by, displayed string
	}{
		{chat.User{ID: 84211, FirstName: "Ana", Username: "anasilva"}, "telegram:84211 @anasilva", "@anasilva"},
		{chat.User{ID: 5150, FirstName: "Bo", LastName: "Li"}, "telegram:5150", "Bo Li"},
		{chat.User{ID: 7}, "telegram:7", "user 7"},
	}
	for _, tt := range tests {
		if got := DecidedBy(&tt.user); got != tt.by {
			t.Errorf("DecidedBy(%+v) = %q, want %q", tt.user, got, tt.by)
		}
		if got := displayName(&tt.user); got != tt.displayed {
			t.Errorf("displayName(%+v) = %q, want %q", tt.user, got, tt.displayed)
		}
	}
}
