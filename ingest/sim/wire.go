package sim

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// How answers go on the wire: JSON encoding and headers, and the
// malformed and dropped replies of fault injection.

// encode renders v as Google does: indented by two spaces unless the request
// said prettyPrint=false, and with <, > and & escaped.
func encode(v any, pretty bool) []byte {
	var b []byte
	var err error
	if pretty {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		panic("sim: encode response: " + err.Error()) // our own types always encode
	}
	return append(b, '\n')
}

func setJSONHeaders(h http.Header, n int) {
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Vary", "Origin, X-Origin, Referer")
	h.Set("Cache-Control", "private")
	h.Set("Content-Length", strconv.Itoa(n))
}

func writeJSON(w http.ResponseWriter, status int, v any, pretty bool) {
	b := encode(v, pretty)
	setJSONHeaders(w.Header(), len(b))
	w.WriteHeader(status)
	w.Write(b)
}

// errorPage is what a proxy between the client and Google might answer: not
// JSON at all.
const errorPage = `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 502 (Server Error)!!1</title>
  <p><b>502.</b> <ins>That’s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>
`

// writeMalformed answers 200 with a body a JSON decoder rejects: the HTML
// page for even variants, the real body cut in half for odd ones.
func writeMalformed(w http.ResponseWriter, body []byte, variant int64) {
	b := []byte(errorPage)
	if variant%2 == 1 {
		b = body[:len(body)/2]
	}
	setJSONHeaders(w.Header(), len(b))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// drop sends the headers, announcing the whole body, and half of it, then
// closes the connection.
func drop(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	setJSONHeaders(h, len(body))
	half := body[:len(body)/2]
	if hj, ok := w.(http.Hijacker); ok {
		conn, buf, err := hj.Hijack()
		if err == nil {
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
			h.Write(buf)
			buf.WriteString("\r\n")
			buf.Write(half)
			buf.Flush()
			return
		}
	}
	// HTTP/2 cannot be hijacked; aborting the handler resets the stream,
	// which the client sees the same way.
	w.WriteHeader(status)
	w.Write(half)
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

// etagOf is a Google-style etag: 27 base64url characters of a SHA-1.
func etagOf(parts ...string) string {
	h := sha1.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
