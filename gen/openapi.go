// Package gen holds groundcrew's generated code: Go for every service under
// go/ and the merged OpenAPI documents (Swagger 2.0 and OpenAPI 3) under
// openapi/. Everything below go/
// and openapi/ is written by `make generate` and never edited by hand.
package gen

import _ "embed"

// OpenAPI is the merged OpenAPI (Swagger 2.0) document of every service's
// REST routes, as protoc-gen-openapiv2 writes it.
//
//go:embed openapi/groundcrew.swagger.json
var OpenAPI []byte

// OpenAPI3 is the OpenAPI 3 document the gateway serves at /openapi.json:
// OpenAPI converted by tools/openapi3, with the gateway's probes, the bearer
// key scheme and the google.rpc.Status error shape with field violations.
//
//go:embed openapi/groundcrew.openapi.json
var OpenAPI3 []byte
