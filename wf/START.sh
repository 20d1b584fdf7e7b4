echo "<result>ok</result>"
