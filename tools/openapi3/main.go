// Command openapi3 writes the OpenAPI 3 document the gateway serves at
// /openapi.json. It converts the merged Swagger 2.0 document that
// protoc-gen-openapiv2 writes from the protos (kin-openapi's openapi2conv)
// and adds what no generator can know: the gateway's own routes, the bearer
// key scheme, the google.rpc.Status error shape with its field violations,
// and the Server-Sent Events form of the streaming routes.
//
// `make generate` runs it after buf; the output is committed under
// gen/openapi/ like the rest of gen/, and the TypeScript client of the
// console is generated from it.
//
//	go run . -in ../../gen/openapi/groundcrew.swagger.json -out ../../gen/openapi/groundcrew.openapi.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "gen/openapi/groundcrew.swagger.json", "the Swagger 2.0 document protoc-gen-openapiv2 wrote")
	out := flag.String("out", "gen/openapi/groundcrew.openapi.json", "where to write the OpenAPI 3 document")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapi3:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	v2, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	v3, err := Convert(context.Background(), v2)
	if err != nil {
		return fmt.Errorf("converting %s: %w", in, err)
	}
	return os.WriteFile(out, v3, 0o644)
}
