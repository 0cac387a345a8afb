package edge

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		want    []Key
		wantErr string
	}{
		{"bare keys are named in order, with every scope", []string{"k1", "ops:k2:admin", "k3"},
			[]Key{{"key-1", "k1", AllScopes}, {"ops", "k2", []Scope{ScopeAdmin}}, {"key-2", "k3", AllScopes}}, ""},
		{"named without scopes has every scope", []string{"ci:k1"}, []Key{{"ci", "k1", AllScopes}}, ""},
		{"scopes joined by +, any case", []string{"ci:k1:Read+WRITE"}, []Key{{"ci", "k1", []Scope{ScopeRead, ScopeWrite}}}, ""},
		{"the alerts scope", []string{"am:k1:alerts"}, []Key{{"am", "k1", []Scope{ScopeAlerts}}}, ""},
		{"unknown scope", []string{"ci:k1:read+root"}, nil, `unknown scope "root"`},
		{"too many parts", []string{"a:b:read:x"}, nil, "want name:key[:scopes]"},
		{"bad name", []string{"a b:k1"}, nil, "the name must be"},
		{"duplicate name", []string{"a:k1", "a:k2"}, nil, `"a" is used twice`},
		{"duplicate key", []string{"a:k1", "b:k1"}, nil, "repeats another entry's key"},
		{"empty entry", []string{"a:k1", " "}, nil, "entry 2 is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKeys(tt.entries)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseKeys(%q) error = %v, want one containing %q", tt.entries, err, tt.wantErr)
				}
				for _, e := range tt.entries {
					if _, secret, ok := strings.Cut(e, ":"); ok && len(secret) > 2 && strings.Contains(err.Error(), secret) {
						t.Errorf("error %q quotes a key", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKeys(%q) = %v", tt.entries, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ParseKeys(%q) = %v, want %v", tt.entries, got, tt.want)
			}
			for i := range got {
				if got[i].Name != tt.want[i].Name || got[i].Secret != tt.want[i].Secret || !slices.Equal(got[i].Scopes, tt.want[i].Scopes) {
					t.Errorf("key %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestClientIP(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8", "192.0.2.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"direct client, header ignored", "198.51.100.9:1234", []string{"6.6.6.6"}, "198.51.100.9"},
		{"trusted proxy", "192.0.2.1:1234", []string{"203.0.113.7"}, "203.0.113.7"},
		{"chain of trusted proxies, spoofed head", "10.1.1.1:1234", []string{"6.6.6.6, 203.0.113.7", "10.2.2.2"}, "203.0.113.7"},
		{"trusted proxy, no header", "10.1.1.1:1234", nil, "10.1.1.1"},
		{"trusted proxy, garbage", "10.1.1.1:1234", []string{"<script>"}, "10.1.1.1"},
		{"IPv6 loopback proxy", "[::1]:1234", []string{"2001:db8::7"}, "2001:db8::7"},
		{"everyone in the chain trusted", "10.1.1.1:1234", []string{"10.3.3.3"}, "10.3.3.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := proxies.ClientIP(r); got != tt.want {
				t.Errorf("ClientIP = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := ParseProxies([]string{"10.0.0.0/33"}); err == nil || !strings.Contains(err.Error(), "GATEWAY_TRUSTED_PROXIES") {
		t.Errorf("bad prefix: %v, want an error naming GATEWAY_TRUSTED_PROXIES", err)
	}
}

func TestHostsAllowed(t *testing.T) {
	h := NewHosts([]string{"Groundcrew.example.com", "203.0.113.7:8080"})
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "app.localhost": true, "127.0.0.1:8080": true, "127.1.2.3": true,
		"[::1]:8080": true, "groundcrew.example.com:443": true, "GROUNDCREW.EXAMPLE.COM.": true, "203.0.113.7": true,
		"evil.example": false, "localhost.evil.example": false, "0.0.0.0:8080": false, "": false, "10.0.0.1": false,
	} {
		if got := h.Allowed(host); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestRequireJSON(t *testing.T) {
	h := RequireJSON(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	tests := []struct {
		method, contentType, body string
		want                      int
	}{
		{"POST", "application/json", "{}", 204},
		{"POST", "Application/JSON; charset=utf-8", "{}", 204},
		{"POST", "text/plain", "{}", 415},
		{"POST", "", "", 415},
		{"POST", "application/jsonp", "{}", 415},
		{"POST", "application/x-www-form-urlencoded", "a=b", 415},
		{"GET", "", "", 204},
		{"OPTIONS", "", "", 204},
		{"DELETE", "", "", 204},
		{"DELETE", "text/plain", "x", 415},
		{"PATCH", "application/json", "{}", 204},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "/v1/x", strings.NewReader(tt.body))
		if tt.body == "" {
			r.Body, r.ContentLength = http.NoBody, 0
		}
		if tt.contentType != "" {
			r.Header.Set("Content-Type", tt.contentType)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s as %q = %d, want %d", tt.method, tt.contentType, w.Code, tt.want)
		}
	}
}

func TestStreamLimiterReleases(t *testing.T) {
	s := NewStreamLimiter(2)
	for i, want := range []bool{true, true, false} {
		if got := s.acquire("ip:a"); got != want {
			t.Fatalf("acquire %d = %v, want %v", i, got, want)
		}
	}
	if !s.acquire("ip:b") {
		t.Error("another client refused")
	}
	s.release("ip:a")
	if !s.acquire("ip:a") {
		t.Error("refused after a release")
	}
	s.release("ip:a")
	s.release("ip:a")
	s.release("ip:b")
	if len(s.open) != 0 {
		t.Errorf("table holds %v after every stream closed, want nothing", s.open)
	}
}

// The access log names the client Identify settled on, through a trusted
// proxy, not the proxy.
func TestAccessLogNamesTheClient(t *testing.T) {
	proxies, _ := ParseProxies([]string{"10.0.0.0/8"})
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	h := AccessLog(logger, Identify(nil, proxies, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	r := httptest.NewRequest("GET", "/v1/alerts", nil)
	r.RemoteAddr = "10.0.0.5:5555"
	r.Header.Set("X-Forwarded-For", "203.0.113.7")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if !strings.Contains(buf.String(), `"client":"203.0.113.7"`) {
		t.Errorf("access log %s, want client 203.0.113.7", buf.String())
	}
}
