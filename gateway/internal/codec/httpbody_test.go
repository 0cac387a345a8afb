package codec

import (
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// responseBody is what grpc-gateway wraps a response in when its rule has
// response_body: "calendar".
type responseBody struct {
	resp *notifierv1.GetCalendarResponse
}

func (r responseBody) XXX_ResponseBody() any { return r.resp.GetCalendar() }

func TestHTTPBodyIsWrittenAsItIs(t *testing.T) {
	j := NewJSON(0)
	ics := []byte("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
	resp := responseBody{&notifierv1.GetCalendarResponse{Calendar: &httpbody.HttpBody{ContentType: "text/calendar; charset=utf-8", Data: ics}}}
	if got := j.ContentType(resp); got != "text/calendar; charset=utf-8" {
		t.Errorf("ContentType = %q, want the body's own", got)
	}
	got, err := j.Marshal(resp.XXX_ResponseBody())
	if err != nil || string(got) != string(ics) {
		t.Errorf("Marshal = %q, %v; want the bytes as they are", got, err)
	}
	// Everything else stays JSON.
	if got := j.ContentType(&notifierv1.GetCalendarRequest{Id: "x"}); got != "application/json" {
		t.Errorf("ContentType(message) = %q, want application/json", got)
	}
	out, err := j.Marshal(&notifierv1.GetCalendarRequest{Id: "x"})
	if err != nil || string(out) != `{"id":"x"}` {
		t.Errorf("Marshal(message) = %s, %v", out, err)
	}
}
