package sqlstore

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrBadCursor reports a page token that this package did not write.
var ErrBadCursor = errors.New("sqlstore: invalid page token")

// Cursor is a keyset-pagination position for lists ordered newest first by
// (time, id): the next page holds the rows strictly below it, so pages stay
// stable while rows are added. Its token is opaque to clients.
type Cursor struct {
	// At is the last row's time in Unix microseconds.
	At int64
	// ID is the last row's id.
	ID string
}

// CursorAfter is the cursor after a row with this time and id.
func CursorAfter(t time.Time, id string) Cursor {
	return Cursor{At: t.UTC().UnixMicro(), ID: id}
}

// Token encodes the cursor as an opaque page token.
func (c Cursor) Token() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At, 10) + ":" + c.ID))
}

// ParseCursor decodes a page token written by Token; it returns ErrBadCursor
// for anything else. An empty token is not a cursor: callers start at the
// top of the list instead.
func ParseCursor(tok string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	at, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{At: n, ID: id}, nil
}
