#!/bin/bash
echo "<result>$(cat poem.txt 2>/dev/null || echo 'no poem.txt was written')</result>"
