# screen.awk - the final screen of a terminal, from the raw bytes written
# to it (tests/fake/pty-run.c), for the live view's tests.
#
#   LC_ALL=C awk -v lastnl=1 -f screen.awk LOG
#
# A tiny terminal: an unbounded screen of rows (scrolling is never needed:
# the block the tests draw fits), CR, LF (the pty turned each newline into
# CR LF), ESC[K / ESC[0K / ESC[2K, ESC[J, ESC[nA, ESC[nB, ESC[?25l and
# ESC[?25h; SGR (ESC[...m) sets nothing.  Anything else is reported as
# "unknown: ..." so a test sees sequences the view should not write.
# Prints each row, trailing blanks removed, then "cursor: shown" or
# "cursor: hidden".  lastnl says whether the log ends with a newline.

function put(c) {
	while (length(line[row]) < col) line[row] = line[row] " "
	line[row] = substr(line[row], 1, col) c substr(line[row], col + 2)
	col++
}

function down(n) {
	row += n
	if (row > maxrow) maxrow = row
}

function csi(params, fin,    n, r) {
	n = params == "" ? 1 : params + 0
	if (fin == "m") return
	if (fin == "K") {
		if (params == "2") line[row] = ""
		else line[row] = substr(line[row], 1, col)
	} else if (fin == "J" && (params == "" || params == "0")) {
		line[row] = substr(line[row], 1, col)
		for (r = row + 1; r <= maxrow; r++) delete line[r]
		maxrow = row
	} else if (fin == "A") {
		row = row - n < 0 ? 0 : row - n
	} else if (fin == "B") {
		down(n)
	} else if (fin == "l" && params == "?25") {
		cursor = "hidden"
	} else if (fin == "h" && params == "?25") {
		cursor = "shown"
	} else {
		print "unknown: ESC[" params fin
	}
}

BEGIN { row = 0; col = 0; maxrow = 0; cursor = "shown" }

# Records were split on LF: each but the first follows one.
NR > 1 { down(1) }

{
	s = $0
	n = length(s)
	i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (c == "\r") {
			col = 0
			i++
		} else if (c == "\033" && substr(s, i + 1, 1) == "[") {
			j = i + 2
			params = ""
			while (j <= n && substr(s, j, 1) ~ /[0-9;?]/) {
				params = params substr(s, j, 1)
				j++
			}
			csi(params, substr(s, j, 1))
			i = j + 1
		} else if (c == "\033") {
			print "unknown: ESC " substr(s, i + 1, 1)
			i += 2
		} else {
			put(c)
			i++
		}
	}
}

END {
	if (lastnl) down(1)
	for (r = 0; r <= maxrow; r++) {
		out = line[r]
		sub(/ +$/, "", out)
		print out
	}
	print "cursor: " cursor
}
