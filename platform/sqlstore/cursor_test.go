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
