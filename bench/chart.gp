# bench/chart.gp: draw bench/results/chart.png from chart.dat (written by
# bench/bench.py report).  Called as
#   gnuplot -e "datafile='...'; outfile='...'; charttitle='...'; ncontenders=N" \
#       bench/chart.gp
# chart.dat columns: 1 label, 2 build s, 3 size MB, 4 insert overhead us/row,
# 5-7 latency ms of the 1/2/3-column queries with present values,
# 8-10 bitmap index scan ms of the same, 11-13 latency ms with absent values.
# "?" marks a missing figure (no index, or no bitmap index scan).

set terminal pngcairo size 1700,1250 font "DejaVu Sans,10" noenhanced
set output outfile
set datafile missing "?"

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics nomirror scale 0 font ",9"
set ytics nomirror
set border 3
set xrange [-0.6:ncontenders - 0.4]
set bmargin 4

set multiplot layout 3,2 title charttitle font ",13"

set title "Query latency, present values (ms, log scale; lower is better)"
set logscale y
set yrange [*:*]
plot datafile using 5:xtic(1) title "1 column" lc rgb "#4477aa", \
     '' using 6 title "2 columns" lc rgb "#66ccee", \
     '' using 7 title "3 columns" lc rgb "#228833"

set title "Query latency, absent values (ms, log scale)"
plot datafile using 11:xtic(1) title "1 column" lc rgb "#4477aa", \
     '' using 12 title "2 columns" lc rgb "#66ccee", \
     '' using 13 title "3 columns" lc rgb "#228833"

set title "Bitmap index scan alone, present values (ms, log scale)"
set key top right
plot datafile using 8:xtic(1) title "1 column" lc rgb "#4477aa", \
     '' using 9 title "2 columns" lc rgb "#66ccee", \
     '' using 10 title "3 columns" lc rgb "#228833"

unset logscale y
set yrange [0:*]
set title "Index build time (s)"
plot datafile using 2:xtic(1) notitle lc rgb "#ee6677"

set title "Index size (MB)"
plot datafile using 3:xtic(1) notitle lc rgb "#aa3377"

set title "Insert overhead per row (µs; insert with the index minus without)"
plot datafile using 4:xtic(1) notitle lc rgb "#ccbb44"

unset multiplot
