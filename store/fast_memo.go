package store

import (
	"reflect"
	"slices"
	"sync"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// rescoreMemo is what one rescoring pass remembers from one run to the
// next, so that evidence many runs share is decoded and scored once: a
// store holds many runs of the same package version, whose contract (and
// often supply-chain and judge evidence) are byte for byte the same.
// Everything is keyed by content, never by run: a bundle's parts are
// shared with an earlier bundle's only when their stored bytes are
// identical, and a probe's outcome only when it reads nothing but such a
// shared part. Results are exactly those of DecodeBundle and
// rubric.Evaluate (the tests compare them).
//
// A rescoreMemo lives for one pass and is safe for concurrent use by the
// pass's workers. The bundles it decodes share values, so nothing may
// modify them, which neither Evaluate nor a pass does.
type rescoreMemo struct {
	dec  *decodeMemo
	eval *rubric.Memo
}

// newRescoreMemo returns the memo of a pass scoring under r.
func newRescoreMemo(r *rubric.Rubric) *rescoreMemo {
	return &rescoreMemo{dec: newDecodeMemo(), eval: rubric.NewMemo(r)}
}

// decodeBundle is DecodeBundle, sharing the contract, supply-chain and
// judge evidence with earlier bundles of the pass whose bytes for them are
// identical.
func (m *rescoreMemo) decodeBundle(stored []byte) (*evidence.Bundle, error) {
	// The decoder copies what it keeps (the memo's keys included), so the
	// JSON can be decompressed into a buffer reused by the next bundle.
	jb := bundleBuffers.Get().(*jsonBuffer)
	defer bundleBuffers.Put(jb)
	data, err := jb.json(stored)
	if err != nil {
		return nil, err
	}
	var b evidence.Bundle
	if err := fastDecode(data, &b, m.dec); err != nil {
		return evidence.Decode(data)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// bundleBuffers are decodeBundle's buffers for decompressed bundles.
var bundleBuffers = sync.Pool{New: func() any { return new(jsonBuffer) }}

// evaluate is rubric.Evaluate(b, r) for the pass's rubric r.
func (m *rescoreMemo) evaluate(b *evidence.Bundle) rubric.Result { return m.eval.Evaluate(b) }

// memoEntries bounds each table of a decodeMemo. A pass over a store of
// many packages sees more distinct contracts than this; the table is then
// emptied and fills again with the packages being read, which, read in
// run order, come in runs of their own.
const memoEntries = 512

// decodeMemo shares decoded values of a few pointer types between decodes
// of identical bytes.
type decodeMemo struct {
	contract, supply, judge memoTable
}

func newDecodeMemo() *decodeMemo { return &decodeMemo{} }

var (
	contractPtr = reflect.TypeFor[*contract.Contract]()
	supplyPtr   = reflect.TypeFor[*evidence.Supply]()
	judgePtr    = reflect.TypeFor[*evidence.JudgeResult]()
)

// table returns the table for values of pointer type t, or nil if t is
// not shared.
func (m *decodeMemo) table(t reflect.Type) *memoTable {
	switch t {
	case contractPtr:
		return &m.contract
	case supplyPtr:
		return &m.supply
	case judgePtr:
		return &m.judge
	}
	return nil
}

// memoPrefix is how many of its first bytes index a value in a memoTable.
// Smaller values are not shared: they are quick to decode.
const memoPrefix = 256

// memoCandidates bounds the values a memoTable keeps under one prefix.
const memoCandidates = 8

// memoTable maps the JSON bytes of objects to the pointers they decoded
// to. It finds a value by the bytes it starts with, so that the decoder
// need not find where a value ends before looking it up: the bytes of an
// object are a valid object, which ends where they end, so input that
// starts with them holds exactly that object there.
type memoTable struct {
	mu sync.RWMutex
	// byPrefix lists the values under their first memoPrefix bytes,
	// oldest first.
	byPrefix map[string][]memoEntry
	n        int
}

type memoEntry struct {
	raw string // the object's bytes
	p   reflect.Value
}

// load returns the length and the value of the object data starts with,
// if the table holds it.
func (t *memoTable) load(data []byte) (int, reflect.Value, bool) {
	if len(data) < memoPrefix {
		return 0, reflect.Value{}, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	list := t.byPrefix[string(data[:memoPrefix])]
	for i := len(list) - 1; i >= 0; i-- {
		if e := &list[i]; len(e.raw) <= len(data) && string(data[:len(e.raw)]) == e.raw {
			return len(e.raw), e.p, true
		}
	}
	return 0, reflect.Value{}, false
}

// store records p as the value the object raw decodes to.
func (t *memoTable) store(raw []byte, p reflect.Value) {
	if len(raw) < memoPrefix {
		return
	}
	key := string(raw)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byPrefix == nil || t.n >= memoEntries {
		t.byPrefix, t.n = map[string][]memoEntry{}, 0
	}
	prefix := key[:memoPrefix]
	list := t.byPrefix[prefix]
	if len(list) >= memoCandidates {
		list = slices.Delete(slices.Clone(list), 0, 1)
		t.n--
	}
	t.byPrefix[prefix] = append(list, memoEntry{key, p})
	t.n++
}
