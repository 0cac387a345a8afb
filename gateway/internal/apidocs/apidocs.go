// Package apidocs serves the API documentation page: Swagger UI over the
// gateway's /openapi.json, from files embedded in the binary (the machines
// this runs on may have no internet, so no CDN).
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html docs.js docs.css swagger-ui
var files embed.FS

// ContentSecurityPolicy is the docs page's policy: scripts, styles and
// requests from the gateway alone, no inline script or style, images also
// as data: URIs (Swagger UI's icons are SVG data URIs in its stylesheet),
// no plugins, no framing, no forms posted elsewhere. Swagger UI sets
// styles through the DOM, which a policy does not restrict.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the docs page and its assets. Mount it under a prefix with
// http.StripPrefix, e.g. "/docs/".
func Handler() http.Handler {
	sub, err := fs.Sub(files, ".")
	if err != nil {
		// fs.Sub on "." of an embed.FS cannot fail.
		panic(err)
	}
	fileServer := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		fileServer.ServeHTTP(w, r)
	})
}
