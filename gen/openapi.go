// Package gen holds groundcrew's generated code: Go for every service under
// go/ and the merged OpenAPI document under openapi/. Everything below go/
// and openapi/ is written by `make generate` and never edited by hand.
package gen

import _ "embed"

// OpenAPI is the merged OpenAPI (Swagger 2.0) document of every service's
// REST routes, as protoc-gen-openapiv2 writes it.
//
//go:embed openapi/groundcrew.swagger.json
var OpenAPI []byte
