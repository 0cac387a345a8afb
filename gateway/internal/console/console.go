// Package console serves the operator console: the single-page app built
// from web/console into dist/ (committed, like gen/) and embedded in the
// gateway binary, so it needs no Node, no CDN and no network at run time.
//
// Every /console/* path that is not an asset answers the app's index.html
// (the app routes on the client); assets have content-hashed names and are
// cached for good, and are sent gzip-compressed to clients that accept it.
package console

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist
var dist embed.FS

// Prefix is where the console is mounted.
const Prefix = "/console/"

// contentSecurityPolicy allows only the console's own scripts, styles and
// API calls; links in messages may go anywhere, embeds nowhere.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

type asset struct {
	body, gzipped []byte
	contentType   string
}

// Handler serves the console under Prefix (mount it at "GET /console/").
func Handler() (http.Handler, error) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, err
	}
	assets := map[string]asset{}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		a := asset{body: body, contentType: mime.TypeByExtension(path.Ext(name))}
		if a.contentType == "" {
			a.contentType = http.DetectContentType(body)
		}
		if a.gzipped, err = gzipBytes(body); err != nil {
			return err
		}
		assets[name] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the embedded console: %w", err)
	}
	index, ok := assets["index.html"]
	if !ok {
		return nil, fmt.Errorf("the embedded console has no index.html: run 'make generate'")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		a, ok := assets[name]
		h := w.Header()
		switch {
		case ok && strings.HasPrefix(name, "assets/"):
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		case strings.HasPrefix(name, "assets/"):
			http.NotFound(w, r)
			return
		default:
			// Any other path is a page of the app.
			a = index
			h.Set("Cache-Control", "no-cache")
			h.Set("Content-Security-Policy", contentSecurityPolicy)
		}
		h.Set("Content-Type", a.contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Add("Vary", "Accept-Encoding")
		body := a.body
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			body = a.gzipped
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	}), nil
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
