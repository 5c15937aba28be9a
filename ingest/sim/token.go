package sim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// Page tokens are opaque to clients, as Google's are. Each one names the
// epoch its first page was served in and the offset of the page it asks for,
// so every page of one paginated fetch comes from the same snapshot of the
// chart (or search results) even when the chart churns meanwhile: a fetch
// never sees a video twice or misses one. A MAC over the token and the query
// it belongs to (region, category, search terms) turns a garbled token, or
// one replayed on another query, into invalidPageToken.
//
// Layout before base64url: version byte, varint epoch, uvarint offset,
// 4-byte truncated SHA-256 of seed, scope and the preceding bytes.

const tokenVersion = 1

type pageToken struct {
	epoch  int64
	offset int
}

var errBadToken = errors.New("invalid page token")

func (s *Server) encodeToken(scope string, t pageToken) string {
	b := []byte{tokenVersion}
	b = binary.AppendVarint(b, t.epoch)
	b = binary.AppendUvarint(b, uint64(t.offset))
	b = append(b, s.tokenMAC(scope, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) decodeToken(scope, raw string) (pageToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < 1+1+1+4 || b[0] != tokenVersion {
		return pageToken{}, errBadToken
	}
	body, mac := b[:len(b)-4], b[len(b)-4:]
	if string(mac) != string(s.tokenMAC(scope, body)) {
		return pageToken{}, errBadToken
	}
	epoch, n := binary.Varint(body[1:])
	if n <= 0 {
		return pageToken{}, errBadToken
	}
	offset, m := binary.Uvarint(body[1+n:])
	if m <= 0 || 1+n+m != len(body) || offset > maxSearch {
		return pageToken{}, errBadToken
	}
	return pageToken{epoch: epoch, offset: int(offset)}, nil
}

func (s *Server) tokenMAC(scope string, body []byte) []byte {
	h := sha256.New()
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], s.cfg.Seed)
	h.Write(seed[:])
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)[:4]
}
