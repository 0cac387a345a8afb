package sqlstore

import (
	"errors"
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	c := CursorAfter(time.Date(2026, 11, 22, 6, 0, 0, 123456000, time.UTC), "01a2-b3")
	got, err := ParseCursor(c.Token())
	if err != nil || got != c {
		t.Errorf("ParseCursor(Token()) = %+v, %v; want %+v", got, err, c)
	}
	for _, bad := range []string{"", "%%%", "bm90LWEtY3Vyc29y" /* "not-a-cursor" */, "MTIzOg" /* "123:" */} {
		if _, err := ParseCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseCursor(%q) error = %v, want ErrBadCursor", bad, err)
		}
	}
}

func TestScopedCursor(t *testing.T) {
	c := CursorAfter(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC), "m-1")
	tok := c.ScopedToken("FAILED|a.example|0|0")
	tests := []struct {
		name    string
		tok     string
		query   string
		want    Cursor
		wantErr error
	}{
		{"same query", tok, "FAILED|a.example|0|0", c, nil},
		{"other query", tok, "|a.example|0|0", Cursor{}, ErrCursorScope},
		{"unscoped token", c.Token(), "FAILED|a.example|0|0", Cursor{}, ErrBadCursor},
		{"garbage", "not base64!", "", Cursor{}, ErrBadCursor},
		{"scope without cursor", "." + scopeKey(""), "", Cursor{}, ErrBadCursor},
		{"empty", "", "", Cursor{}, ErrBadCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScopedCursor(tt.tok, tt.query)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("ParseScopedCursor(%q, %q) = %+v, %v; want %+v, %v", tt.tok, tt.query, got, err, tt.want, tt.wantErr)
			}
		})
	}
	if !errors.Is(ErrCursorScope, ErrBadCursor) {
		t.Error("ErrCursorScope is not an ErrBadCursor")
	}
}
