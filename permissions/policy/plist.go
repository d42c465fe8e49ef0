package policy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
)

// macOS managed preferences (a configuration profile's payload, written by MDM to
// /Library/Managed Preferences/<domain>.plist) carry policy too: Switchboard's and Claude Code's
// domains hold the whole settings as a JSON string under "Settings"; VS Code's holds one key per
// policy. plistJSON turns the top-level dictionary of a binary or XML property list into a JSON
// object, so that the same parsers read it.

// plistJSON decodes a property list whose root is a dictionary into JSON.
func plistJSON(data []byte) ([]byte, error) {
	var v any
	var err error
	if bytes.HasPrefix(data, []byte("bplist00")) {
		v, err = readBplist(data)
	} else {
		v, err = readXMLPlist(data)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("the property list's root is not a dictionary")
	}
	return json.Marshal(v)
}

// readBplist reads a binary property list (format bplist00): dictionaries, arrays, strings,
// integers, reals, booleans; other object kinds are errors.
func readBplist(data []byte) (any, error) {
	if len(data) < 8+32 {
		return nil, errors.New("binary property list too short")
	}
	tr := data[len(data)-32:]
	offSize, refSize := int(tr[6]), int(tr[7])
	numObjects := binary.BigEndian.Uint64(tr[8:16])
	top := binary.BigEndian.Uint64(tr[16:24])
	tableOff := binary.BigEndian.Uint64(tr[24:32])
	if offSize < 1 || offSize > 8 || refSize < 1 || refSize > 8 || numObjects > 1<<20 || top >= numObjects ||
		tableOff > uint64(len(data)) || uint64(len(data))-tableOff < numObjects*uint64(offSize) {
		return nil, errors.New("binary property list: bad trailer")
	}
	uintAt := func(b []byte) uint64 {
		var n uint64
		for _, c := range b {
			n = n<<8 | uint64(c)
		}
		return n
	}
	offsets := make([]uint64, numObjects)
	for i := range offsets {
		p := tableOff + uint64(i*offSize)
		offsets[i] = uintAt(data[p : p+uint64(offSize)])
	}
	var obj func(ref uint64, depth int) (any, error)
	obj = func(ref uint64, depth int) (any, error) {
		if ref >= numObjects || depth > maxDepth {
			return nil, errors.New("binary property list: bad object reference")
		}
		p := offsets[ref]
		if p >= tableOff {
			return nil, errors.New("binary property list: object outside the data")
		}
		marker := data[p]
		kind, info := marker>>4, int(marker&0x0f)
		p++
		count := func() (int, error) {
			if info != 0x0f {
				return info, nil
			}
			if p >= tableOff || data[p]>>4 != 0x1 {
				return 0, errors.New("binary property list: bad length")
			}
			n := 1 << (data[p] & 0x0f)
			p++
			if p+uint64(n) > tableOff || n > 8 {
				return 0, errors.New("binary property list: bad length")
			}
			v := uintAt(data[p : p+uint64(n)])
			p += uint64(n)
			if v > uint64(len(data)) {
				return 0, errors.New("binary property list: bad length")
			}
			return int(v), nil
		}
		need := func(n uint64) error {
			if p+n > tableOff {
				return errors.New("binary property list: object runs past the data")
			}
			return nil
		}
		switch kind {
		case 0x0:
			switch marker {
			case 0x08:
				return false, nil
			case 0x09:
				return true, nil
			}
			return nil, nil
		case 0x1:
			n := uint64(1) << info
			if n > 8 || need(n) != nil {
				return nil, errors.New("binary property list: bad integer")
			}
			return json.Number(strconv.FormatInt(int64(uintAt(data[p:p+n])), 10)), nil
		case 0x2:
			n := uint64(1) << info
			if (n != 4 && n != 8) || need(n) != nil {
				return nil, errors.New("binary property list: bad real")
			}
			if n == 4 {
				return float64(math.Float32frombits(uint32(uintAt(data[p : p+4])))), nil
			}
			return math.Float64frombits(uintAt(data[p : p+8])), nil
		case 0x5, 0x6:
			n, err := count()
			if err != nil {
				return nil, err
			}
			if kind == 0x5 {
				if need(uint64(n)) != nil {
					return nil, errors.New("binary property list: bad string")
				}
				return string(data[p : p+uint64(n)]), nil
			}
			if need(uint64(2*n)) != nil {
				return nil, errors.New("binary property list: bad string")
			}
			u := make([]uint16, n)
			for i := range u {
				u[i] = binary.BigEndian.Uint16(data[p+uint64(2*i):])
			}
			return string(utf16.Decode(u)), nil
		case 0xa, 0xd:
			n, err := count()
			if err != nil {
				return nil, err
			}
			refs := n
			if kind == 0xd {
				refs = 2 * n
			}
			if need(uint64(refs*refSize)) != nil {
				return nil, errors.New("binary property list: bad container")
			}
			ref := func(i int) uint64 {
				q := p + uint64(i*refSize)
				return uintAt(data[q : q+uint64(refSize)])
			}
			if kind == 0xa {
				arr := make([]any, n)
				for i := range arr {
					if arr[i], err = obj(ref(i), depth+1); err != nil {
						return nil, err
					}
				}
				return arr, nil
			}
			m := make(map[string]any, n)
			for i := 0; i < n; i++ {
				k, err := obj(ref(i), depth+1)
				if err != nil {
					return nil, err
				}
				ks, ok := k.(string)
				if !ok {
					return nil, errors.New("binary property list: a dictionary key is not a string")
				}
				if m[ks], err = obj(ref(n+i), depth+1); err != nil {
					return nil, err
				}
			}
			return m, nil
		}
		return nil, fmt.Errorf("binary property list: unsupported object kind %#x", marker)
	}
	return obj(top, 0)
}

// readXMLPlist reads an XML property list: dict, array, string, integer, real, true, false.
func readXMLPlist(data []byte) (any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var value func(start xml.StartElement, depth int) (any, error)
	text := func() (string, error) {
		var b bytes.Buffer
		for {
			t, err := d.Token()
			if err != nil {
				return "", err
			}
			switch t := t.(type) {
			case xml.CharData:
				b.Write(t)
			case xml.EndElement:
				return b.String(), nil
			case xml.StartElement:
				return "", fmt.Errorf("property list: unexpected <%s>", t.Name.Local)
			}
		}
	}
	next := func() (*xml.StartElement, error) {
		for {
			t, err := d.Token()
			if err != nil {
				return nil, err
			}
			switch t := t.(type) {
			case xml.StartElement:
				return &t, nil
			case xml.EndElement:
				return nil, nil
			}
		}
	}
	value = func(start xml.StartElement, depth int) (any, error) {
		if depth > maxDepth {
			return nil, errors.New("property list nested too deep")
		}
		switch start.Name.Local {
		case "string":
			return text()
		case "integer":
			s, err := text()
			if err != nil {
				return nil, err
			}
			if _, err := strconv.ParseInt(s, 10, 64); err != nil {
				return nil, fmt.Errorf("property list: bad integer %q", s)
			}
			return json.Number(s), nil
		case "real":
			s, err := text()
			if err != nil {
				return nil, err
			}
			return strconv.ParseFloat(s, 64)
		case "true", "false":
			if _, err := text(); err != nil {
				return nil, err
			}
			return start.Name.Local == "true", nil
		case "array":
			arr := []any{}
			for {
				el, err := next()
				if err != nil || el == nil {
					return arr, err
				}
				v, err := value(*el, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
		case "dict":
			m := map[string]any{}
			for {
				el, err := next()
				if err != nil || el == nil {
					return m, err
				}
				if el.Name.Local != "key" {
					return nil, fmt.Errorf("property list: <%s> where a <key> belongs", el.Name.Local)
				}
				k, err := text()
				if err != nil {
					return nil, err
				}
				vel, err := next()
				if err != nil || vel == nil {
					return nil, fmt.Errorf("property list: key %q has no value", k)
				}
				if m[k], err = value(*vel, depth+1); err != nil {
					return nil, err
				}
			}
		}
		return nil, fmt.Errorf("property list: unsupported <%s>", start.Name.Local)
	}
	for {
		t, err := d.Token()
		if err == io.EOF {
			return nil, errors.New("property list: no value")
		}
		if err != nil {
			return nil, fmt.Errorf("property list: %w", err)
		}
		if se, ok := t.(xml.StartElement); ok && se.Name.Local != "plist" {
			return value(se, 0)
		}
	}
}
