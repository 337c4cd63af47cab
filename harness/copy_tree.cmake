# cmake -DSOURCE=DIR -DDESTINATION=DIR -P copy_tree.cmake: copies DIR's contents into
# DESTINATION, skipping every file already there with the same timestamp (file(COPY) keeps
# timestamps), so a rebuild rewrites no adapter or plan that a running test may be reading.
file(COPY ${SOURCE}/ DESTINATION ${DESTINATION})
