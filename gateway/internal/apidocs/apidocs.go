// Package apidocs serves the API documentation page: Swagger UI over the
// gateway's /openapi.json, from files embedded in the binary (the machines
// this runs on may have no internet, so no CDN).
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html swagger-ui
var files embed.FS

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
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fileServer.ServeHTTP(w, r)
	})
}
