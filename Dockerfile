# jobgate's images. The default target, `gateway` (the last stage), runs the gateway and
# observers and holds no mock provider or fakes; the `mock` target adds them (package
# jobgate_fakes) for a local stack: docker-compose.yml builds it for its mock-provider.
# Both run as the non-root user `jobgate`; everything they write (the SQLite default
# `$JOBGATE_DATA_DIR/jobgate.db`, stored results, the mock's state) lives under
# JOBGATE_DATA_DIR, a volume that user owns.
FROM python:3.11-slim AS base
WORKDIR /srv/jobgate
COPY pyproject.toml README.md LICENSE alembic.ini ./
COPY alembic ./alembic
COPY app ./app
COPY jobgate_client ./jobgate_client
# Editable install keeps alembic/ next to the package (`jobgate migrate` finds it there).
RUN pip install --no-cache-dir -e .
ENV JOBGATE_DATA_DIR=/var/lib/jobgate \
    JOBGATE_MOCK_STATE_PATH=/var/lib/jobgate/mock_provider.db
RUN useradd --system --home /var/lib/jobgate jobgate && mkdir -p /var/lib/jobgate \
    && chown jobgate /var/lib/jobgate
VOLUME ["/var/lib/jobgate"]

FROM base AS mock
COPY jobgate_fakes ./jobgate_fakes
RUN pip install --no-cache-dir -e .
USER jobgate
EXPOSE 8081
CMD ["jobgate", "mock-provider", "--host", "0.0.0.0", "--port", "8081"]

FROM base AS gateway
USER jobgate
EXPOSE 8080
# Ready means the database answers and is at the head migration (not just "the port is open").
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/v1/readyz', timeout=2)"]
# With no JOBGATE_DATABASE_URL, `serve` migrates the SQLite default itself; with one,
# run `jobgate migrate` first (docker-compose.yml does, in its one-shot `migrate` service).
CMD ["jobgate", "serve", "--host", "0.0.0.0", "--port", "8080"]
