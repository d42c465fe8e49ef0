package lsp

import "testing"

func TestOffsetOf(t *testing.T) {
	text := "ab\n😀x\r\nlast"
	for _, tc := range []struct {
		line, char, want int
	}{
		{0, 0, 0}, {0, 2, 2}, {0, 9, 2}, // past the end of a line clamps
		{1, 0, 3}, {1, 2, 7}, {1, 3, 8}, {1, 4, 8}, // 😀 is two UTF-16 units, \r\n ends the line
		{2, 4, 14}, {9, 0, len(text)},
	} {
		if got := offsetOf(text, lspPosition{Line: tc.line, Character: tc.char}); got != tc.want {
			t.Errorf("offsetOf(%d:%d) = %d, want %d", tc.line, tc.char, got, tc.want)
		}
	}
	if got := endPosition(text); got != (lspPosition{Line: 2, Character: 4}) {
		t.Errorf("endPosition = %+v", got)
	}
	if got := endPosition("😀"); got != (lspPosition{Line: 0, Character: 2}) {
		t.Errorf("endPosition(emoji) = %+v", got)
	}
}
