package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/internal/store"
)

// Item encoding, deterministic and compact (Data is up to 400 KB, so no
// base64): a format byte, the four index keys as uvarint-length-prefixed
// strings, Version as uvarint, Count and ExpiresAt as varints, then Data to
// the end. PK and SK are not repeated: they are the bucket key.
const formatV1 = 1

func encodeItem(it *store.Item) []byte {
	n := 1 + 4*binary.MaxVarintLen64 + len(it.GSI1PK) + len(it.GSI1SK) + len(it.GSI2PK) +
		len(it.GSI2SK) + 3*binary.MaxVarintLen64 + len(it.Data)
	return appendItem(make([]byte, 0, n), it)
}

// appendItem appends encodeItem's encoding of it to b.
func appendItem(b []byte, it *store.Item) []byte {
	b = append(b, formatV1)
	for _, s := range [...]string{it.GSI1PK, it.GSI1SK, it.GSI2PK, it.GSI2SK} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, it.Version)
	b = binary.AppendVarint(b, it.Count)
	b = binary.AppendVarint(b, it.ExpiresAt)
	return append(b, it.Data...)
}

var errCorrupt = errors.New("bolt: corrupt item")

// decodeItem decodes raw, which bbolt owns, into a fresh item that shares
// no memory with it (bbolt's pages are valid only inside the transaction).
func decodeItem(pk, sk string, raw []byte) (*store.Item, error) {
	if len(raw) == 0 || raw[0] != formatV1 {
		return nil, fmt.Errorf("%w at %s / %s: unknown format", errCorrupt, pk, sk)
	}
	b := raw[1:]
	it := &store.Item{PK: pk, SK: sk}
	for _, dst := range [...]*string{&it.GSI1PK, &it.GSI1SK, &it.GSI2PK, &it.GSI2SK} {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w at %s / %s: bad index key", errCorrupt, pk, sk)
		}
		*dst = string(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	var n int
	if it.Version, n = binary.Uvarint(b); n <= 0 {
		return nil, fmt.Errorf("%w at %s / %s: bad version", errCorrupt, pk, sk)
	}
	b = b[n:]
	if it.Count, n = binary.Varint(b); n <= 0 {
		return nil, fmt.Errorf("%w at %s / %s: bad count", errCorrupt, pk, sk)
	}
	b = b[n:]
	if it.ExpiresAt, n = binary.Varint(b); n <= 0 {
		return nil, fmt.Errorf("%w at %s / %s: bad expiry", errCorrupt, pk, sk)
	}
	b = b[n:]
	if len(b) > 0 {
		it.Data = append([]byte(nil), b...)
	}
	return it, nil
}
