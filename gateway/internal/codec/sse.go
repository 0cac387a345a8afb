package codec

import (
	"bytes"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// SSEContentType is the media type of Server-Sent Events.
const SSEContentType = "text/event-stream"

// SSE renders each message of a server stream as one Server-Sent Event: a
// `data:` line holding the message's JSON, then a blank line. The gateway
// picks it for requests that send `Accept: text/event-stream`; requests are
// still decoded as JSON.
type SSE struct {
	*JSON
}

var _ runtime.Marshaler = SSE{}

// NewSSE returns the SSE marshaler over the gateway's JSON.
func NewSSE(j *JSON) SSE { return SSE{JSON: j} }

// ContentType implements runtime.Marshaler.
func (SSE) ContentType(any) string { return SSEContentType }

// Marshal implements runtime.Marshaler: one `data:` line per event. JSON has
// no raw newlines, so one line always suffices.
func (s SSE) Marshal(v any) ([]byte, error) {
	data, err := s.JSON.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + 8)
	b.WriteString("data: ")
	b.Write(data)
	return b.Bytes(), nil
}

// Delimiter implements runtime.Delimited: a blank line ends an event.
func (SSE) Delimiter() []byte { return []byte("\n\n") }
