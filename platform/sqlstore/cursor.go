package sqlstore

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadCursor reports a page token that this package did not write.
var ErrBadCursor = errors.New("sqlstore: invalid page token")

// ErrCursorScope reports a scoped page token used with another query than
// the one it was written for (see Cursor.ScopedToken). It is an ErrBadCursor.
var ErrCursorScope = fmt.Errorf("%w: it belongs to a query with other filters", ErrBadCursor)

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

// ScopedToken is Token bound to a query, typically a list's filters written
// as a string: ParseScopedCursor accepts it only for the same query, so a
// page token is not carried over to a list with other filters (whose rows
// below the cursor are other rows). The query itself is not readable from
// the token, only a fingerprint of it.
func (c Cursor) ScopedToken(query string) string {
	// '.' is not in the URL-safe base64 alphabet, so the split is unambiguous.
	return c.Token() + "." + scopeKey(query)
}

// ParseScopedCursor decodes a token written by ScopedToken for the same
// query: ErrCursorScope when it was written for another query, ErrBadCursor
// for anything else that is not such a token.
func ParseScopedCursor(tok, query string) (Cursor, error) {
	body, scope, ok := strings.Cut(tok, ".")
	if !ok {
		return Cursor{}, ErrBadCursor
	}
	c, err := ParseCursor(body)
	if err != nil {
		return Cursor{}, err
	}
	if scope != scopeKey(query) {
		return Cursor{}, ErrCursorScope
	}
	return c, nil
}

func scopeKey(query string) string {
	sum := sha256.Sum256([]byte(query))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}
