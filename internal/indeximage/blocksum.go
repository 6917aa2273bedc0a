package indeximage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// sumKey sums the blocks of database layers, to find those a change left
// as they were: of a layer read from a registry as it is decompressed, of
// the layer being written, and of the layer a database cache entry keeps
// (the entry keeps the sums and the key, so that the next change finds
// the unchanged blocks without reading the database first; maphash could
// not do that, its seeds live and die with the process). The sums are
// GMAC tags under a random AES key: a polynomial hash with a secret key,
// as fast as maphash on CPUs with carry-less multiplication, on which no
// content can be chosen to collide without the key. The AEAD keeps no
// state between calls, so sum runs on several goroutines at once.
type sumKey struct {
	raw  [16]byte
	aead cipher.AEAD
}

var zeroNonce = make([]byte, 12)

func newSumKey() (*sumKey, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	return sumKeyOf(raw)
}

func sumKeyOf(raw [16]byte) (*sumKey, error) {
	blk, err := aes.NewCipher(raw[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, err
	}
	return &sumKey{raw: raw, aead: aead}, nil
}

// parseSumKey reads a key as a cache entry keeps it (hex).
func parseSumKey(s string) (*sumKey, error) {
	var raw [16]byte
	if n, err := hex.Decode(raw[:], []byte(s)); err != nil || n != len(raw) || len(s) != 2*len(raw) {
		return nil, errors.New("bad block-sum key")
	}
	return sumKeyOf(raw)
}

func (k *sumKey) String() string { return hex.EncodeToString(k.raw[:]) }

// sum is the block's sum: the first 8 bytes of the GMAC tag (the block as
// additional data, nothing encrypted, a fixed nonce: the tag is then a
// keyed polynomial hash of the block).
func (k *sumKey) sum(block []byte) uint64 {
	var tag [16]byte
	out := k.aead.Seal(tag[:0], zeroNonce, nil, block)
	return binary.LittleEndian.Uint64(out[:8])
}
