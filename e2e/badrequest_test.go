package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHandlerChecksNameTheFieldOverREST holds, on the real stack, that a
// 400 a service's handler writes itself (not a proto rule, not the
// gateway's decoding) reaches a REST client as a google.rpc.BadRequest
// naming the field as the client spelt it: a page token no list call
// issued is refused by grounding's research handler on page_token, and
// the client, which sent pageToken, reads pageToken. A refusal caused by
// the server's configuration rather than a field (an engine with no key)
// is a 400 carrying a google.rpc.PreconditionFailure that names it.
func TestHandlerChecksNameTheFieldOverREST(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	s := startStack(t, map[string]string{}, "")
	for _, path := range []string{
		"/v1/research?pageToken=not-a-token",
		"/v1/approvals?pageToken=not-a-token",
	} {
		t.Run(path, func(t *testing.T) {
			code, body := roundTrip(t, "GET", s.GatewayURL+path, "")
			if code != http.StatusBadRequest {
				t.Fatalf("GET %s = %d %s, want 400", path, code, body)
			}
			var st struct {
				Code    int
				Message string
				Details []struct {
					Type            string `json:"@type"`
					FieldViolations []struct{ Field, Description string }
				}
			}
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if len(st.Details) == 0 || !strings.HasSuffix(st.Details[0].Type, "google.rpc.BadRequest") {
				t.Fatalf("body %s has no BadRequest detail", body)
			}
			v := st.Details[0].FieldViolations
			if len(v) != 1 || v[0].Field != "pageToken" || !strings.Contains(v[0].Description, "previous page") {
				t.Errorf("violations %+v, want one on pageToken saying it is not from a previous page", v)
			}
			if !strings.Contains(st.Message, "pageToken") || strings.Contains(string(body), "page_token") {
				t.Errorf("body %s names the field otherwise than the client spelt it", body)
			}
		})
	}
	t.Run("engine not configured", func(t *testing.T) {
		code, body := roundTrip(t, "POST", s.GatewayURL+"/v1/search", `{"query":"redis eviction","engine":"EXA"}`)
		var st struct {
			Code    int
			Message string
			Details []struct {
				Type       string `json:"@type"`
				Violations []struct{ Type, Subject, Description string }
			}
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		if code != http.StatusBadRequest || st.Code != 9 || !strings.Contains(st.Message, "EXA_API_KEY") {
			t.Fatalf("POST /v1/search with engine EXA and no key = %d %s, want 400, code 9 naming EXA_API_KEY", code, body)
		}
		if len(st.Details) != 1 || !strings.HasSuffix(st.Details[0].Type, "google.rpc.PreconditionFailure") ||
			len(st.Details[0].Violations) != 1 || st.Details[0].Violations[0].Type != "ENGINE_NOT_CONFIGURED" || st.Details[0].Violations[0].Subject != "engines/exa" {
			t.Errorf("body %s: want one PreconditionFailure ENGINE_NOT_CONFIGURED on engines/exa", body)
		}
	})
}

// roundTrip sends body (JSON, or nothing when "") and returns the status
// and the answer's body, whatever the status.
func roundTrip(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	var in io.Reader
	if body != "" {
		in = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}
