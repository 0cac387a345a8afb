package approval

import (
	"slices"
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

func TestParseApprovers(t *testing.T) {
	tests := []struct {
		spec      string
		wantErr   bool
		allowed   []chat.User
		refused   []chat.User
		usernames []string
	}{
		// The README's own examples.
		{spec: "84211,@ana", allowed: []chat.User{{ID: 84211}, {ID: 1, Username: "Ana"}}, refused: []chat.User{{ID: 2, Username: "anabel"}}, usernames: []string{"ana"}},
		{spec: "84211,@ann", allowed: []chat.User{{ID: 3, Username: "ann"}}, usernames: []string{"ann"}},
		{spec: " ann_oncall , 501 ", allowed: []chat.User{{ID: 501}, {ID: 9, Username: "ANN_ONCALL"}}, usernames: []string{"ann_oncall"}},
		{spec: "84211", allowed: []chat.User{{ID: 84211}}, refused: []chat.User{{ID: 1, Username: "ana"}}, usernames: []string{}},
		{spec: "", allowed: []chat.User{{ID: 1}}, usernames: []string{}},
		{spec: "-5", wantErr: true},
		{spec: "@1ana", wantErr: true},
		{spec: "@ana-silva", wantErr: true},
		{spec: "@", wantErr: true},
		{spec: "@" + "a234567890123456789012345678901x3", wantErr: true},
	}
	for _, tt := range tests {
		a, err := ParseApprovers(tt.spec)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseApprovers(%q) error %v, want error %v", tt.spec, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		for _, u := range tt.allowed {
			if !a.Allows(&u) {
				t.Errorf("%q refuses %+v", tt.spec, u)
			}
		}
		for _, u := range tt.refused {
			if a.Allows(&u) {
				t.Errorf("%q allows %+v", tt.spec, u)
			}
		}
		if got := a.Usernames(); !slices.Equal(got, tt.usernames) {
			t.Errorf("%q usernames %v, want %v", tt.spec, got, tt.usernames)
		}
	}
}
